/**
 * The request stream of the agentic-context scenario: Poisson arrivals, a class by share, a context by
 * the class's Zipf law. Seeded: every policy sees the same stream.
 */
import { createRng } from "../../peers/rng.js";
import type { RequestClassSpec } from "./agentic-scenario.js";

export interface ContextRequest {
  /** Offset from the start of the stream, ms. */
  readonly atMs: number;
  readonly requestClass: string;
  readonly context: string;
}

/**
 * @example
 * const stream = requestStream(classes, 1.0, 100, 10_000, 7); // 10 s at 100 req/s
 */
export function requestStream(
  classes: readonly RequestClassSpec[],
  zipfSkew: number,
  ratePerS: number,
  durationMs: number,
  seed: number,
): ContextRequest[] {
  const rng = createRng(seed);
  const totalShare = classes.reduce((s, c) => s + c.share, 0);
  const cdfs = classes.map((c) => {
    const w = Array.from({ length: c.contexts }, (_, i) => 1 / Math.pow(i + 1, zipfSkew));
    const sum = w.reduce((a, b) => a + b, 0);
    let acc = 0;
    return w.map((x) => (acc += x / sum));
  });
  const out: ContextRequest[] = [];
  let t = 0;
  for (;;) {
    t += rng.exponential(1000 / ratePerS);
    if (t >= durationMs) return out;
    let u = rng.next() * totalShare;
    let ci = 0;
    while (ci < classes.length - 1 && u >= classes[ci]!.share) u -= classes[ci++]!.share;
    const cdf = cdfs[ci]!;
    const v = rng.next();
    let k = 0;
    while (k < cdf.length - 1 && v > cdf[k]!) k++;
    out.push({ atMs: t, requestClass: classes[ci]!.name, context: `ctx-${k}` });
  }
}
