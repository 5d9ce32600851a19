/**
 * A latency CDF as a piecewise-linear function through knots `(x[i], f[i])`, x in ms, both non-decreasing.
 * Equal consecutive x make a jump (a point mass); the function is right-continuous: `at(x)` at a jump returns
 * the value after it. Below the first knot the CDF is 0; from the last knot on it is `f[last]` (1 when built
 * from data). The fan-out property tests build arbitrary CDFs with it.
 *
 * @example
 * const cdf = new PiecewiseCdf();
 * cdf.push(10, 0); cdf.push(20, 1); // uniform on [10, 20] ms
 * cdf.at(15); // 0.5
 * cdf.quantile(0.99); // 19.9
 */
export class PiecewiseCdf {
  x: Float64Array = new Float64Array(16);
  f: Float64Array = new Float64Array(16);
  length = 0;

  clear(): void {
    this.length = 0;
  }

  /** Appends a knot; x and f must not decrease (violations are clamped up). Exact repeats are skipped. */
  push(xMs: number, fraction: number): void {
    const n = this.length;
    if (n > 0) {
      const lastX = this.x[n - 1] as number;
      const lastF = this.f[n - 1] as number;
      if (xMs < lastX) xMs = lastX;
      if (fraction < lastF) fraction = lastF;
      if (xMs === lastX && fraction === lastF) return;
    }
    if (n === this.x.length) this.grow();
    this.x[n] = xMs;
    this.f[n] = fraction;
    this.length = n + 1;
  }

  /** Smallest x with positive probability at or below it (NaN when empty). */
  get minX(): number {
    return this.length === 0 ? NaN : (this.x[0] as number);
  }

  /** Largest knot (NaN when empty). */
  get maxX(): number {
    return this.length === 0 ? NaN : (this.x[this.length - 1] as number);
  }

  /** P(latency <= tMs). */
  at(tMs: number): number {
    const n = this.length;
    const x = this.x;
    if (n === 0 || !(tMs >= (x[0] as number))) return 0;
    if (tMs >= (x[n - 1] as number)) return this.f[n - 1] as number;
    // largest i with x[i] <= t; then x[i+1] > t
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if ((x[mid] as number) <= tMs) lo = mid;
      else hi = mid;
    }
    const x0 = x[lo] as number;
    const f0 = this.f[lo] as number;
    return f0 + (((this.f[hi] as number) - f0) * (tMs - x0)) / ((x[hi] as number) - x0);
  }

  /** Smallest t with P(latency <= t) >= q, for q in (0, 1]; NaN when empty. */
  quantile(q: number): number {
    const n = this.length;
    if (n === 0) return NaN;
    const f = this.f;
    if (q <= (f[0] as number)) return this.x[0] as number;
    if (q >= (f[n - 1] as number)) {
      // the first knot that reaches the top
      const top = f[n - 1] as number;
      let i = n - 1;
      while (i > 0 && (f[i - 1] as number) >= top) i--;
      return this.interpolate(i, Math.min(q, top));
    }
    // first i with f[i] >= q; f[0] < q
    let lo = 0;
    let hi = n - 1;
    while (hi - lo > 1) {
      const mid = (lo + hi) >>> 1;
      if ((f[mid] as number) >= q) hi = mid;
      else lo = mid;
    }
    return this.interpolate(hi, q);
  }

  private interpolate(i: number, q: number): number {
    if (i === 0) return this.x[0] as number;
    const x0 = this.x[i - 1] as number;
    const f0 = this.f[i - 1] as number;
    const f1 = this.f[i] as number;
    if (f1 <= f0) return this.x[i] as number;
    return x0 + ((q - f0) / (f1 - f0)) * ((this.x[i] as number) - x0);
  }

  private grow(): void {
    const size = this.x.length * 2;
    const x = new Float64Array(size);
    const f = new Float64Array(size);
    x.set(this.x);
    f.set(this.f);
    this.x = x;
    this.f = f;
  }
}
