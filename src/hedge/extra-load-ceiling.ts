/**
 * The extra-load ceiling (like Finagle's `maxExtraLoad`): in every window of `windowMs`, the backups of
 * the fan-outs started in it never exceed `maxExtraLoad × their primary branches + minBackupsPerWindow`.
 *
 * A backup counts with its fan-out, at the fan-out's start, so the bound holds for *every* window, not
 * only the trailing one: a window's count grows only when one of its fan-outs admits a backup, and `admit`
 * checks every window holding that start — (w, w + windowMs] for the w where a count changes. O(m log m)
 * per admission for the m fan-outs of the last two windows; a start is O(1) amortised.
 *
 * @example
 * const ceiling = new ExtraLoadCeiling({ maxExtraLoad: 0.05 });
 * ceiling.start(now, 1);          // a fan-out with one primary
 * ceiling.admit(startedAt, now);  // true: a backup of it fits; it is counted
 */
import { checkRange } from "../util/range.js";
import { HEDGE_DEFAULTS, HEDGE_RANGES } from "./options.js";

export interface ExtraLoadCeilingOptions {
  readonly maxExtraLoad?: number;
  readonly windowMs?: number;
  readonly minBackupsPerWindow?: number;
}

export class ExtraLoadCeiling {
  readonly maxExtraLoad: number;
  readonly windowMs: number;
  readonly minBackupsPerWindow: number;
  /** Fan-out starts, ascending, with their primaries and admitted backups. */
  #at: number[] = [];
  #primaries: number[] = [];
  #backups: number[] = [];
  #refused = 0;
  #admitted = 0;

  /** @throws TailswarmError INVALID_ARGUMENT for a value out of its range (HEDGE_RANGES). */
  constructor(options: ExtraLoadCeilingOptions = {}) {
    this.maxExtraLoad = checkRange(
      "hedge.maxExtraLoad",
      options.maxExtraLoad ?? HEDGE_DEFAULTS.maxExtraLoad,
      HEDGE_RANGES.maxExtraLoad,
    );
    this.windowMs = checkRange(
      "hedge.ceilingWindowMs",
      options.windowMs ?? HEDGE_DEFAULTS.ceilingWindowMs,
      HEDGE_RANGES.ceilingWindowMs,
    );
    this.minBackupsPerWindow = checkRange(
      "hedge.minBackupsPerWindow",
      options.minBackupsPerWindow ?? HEDGE_DEFAULTS.minBackupsPerWindow,
      HEDGE_RANGES.minBackupsPerWindow,
    );
  }

  /**
   * A fan-out with `primaries` branches started at `at`; returns the start it is counted at (`at`, or the
   * latest start recorded when `at` is earlier): the key its backups are admitted with.
   */
  start(at: number, primaries: number): number {
    this.#evict(at);
    const n = this.#at.length;
    if (n > 0 && at < (this.#at[n - 1] as number)) at = this.#at[n - 1] as number;
    if (n > 0 && this.#at[n - 1] === at)
      this.#primaries[n - 1] = (this.#primaries[n - 1] as number) + primaries;
    else {
      this.#at.push(at);
      this.#primaries.push(primaries);
      this.#backups.push(0);
    }
    return at;
  }

  /**
   * One more backup for the fan-out started at `startedAt`, asked at `now`: true (and counted) when every
   * window containing that start stays within the ceiling. A start older than one window, or never
   * recorded, is refused.
   */
  admit(startedAt: number, now: number): boolean {
    this.#evict(now);
    const i = this.#indexOf(startedAt);
    if (i < 0 || startedAt <= now - this.windowMs) {
      this.#refused++;
      return false;
    }
    const w = this.windowMs;
    const at = this.#at;
    const m = at.length;
    const pSum = new Float64Array(m + 1);
    const bSum = new Float64Array(m + 1);
    for (let j = 0; j < m; j++) {
      pSum[j + 1] = (pSum[j] as number) + (this.#primaries[j] as number);
      bSum[j + 1] = (bSum[j] as number) + (this.#backups[j] as number);
    }
    // candidate windows (s, s + w], each with the last start it must hold (s + w can round below it)
    const candidates: { s: number; last: number }[] = [{ s: startedAt - w, last: i }];
    for (let j = 0; j < m; j++) {
      const t = at[j] as number;
      if (t >= startedAt - w && t < startedAt) candidates.push({ s: t, last: i });
      if (t - w >= startedAt - w && t - w < startedAt) candidates.push({ s: t - w, last: Math.max(i, j) });
    }
    for (const c of candidates) {
      // the starts in (s, s + w]: indices [firstAbove(s), firstAbove(s + w)); start i is in every one
      const a = Math.min(firstAbove(at, c.s), i);
      const b = Math.max(firstAbove(at, c.s + w), c.last + 1);
      const primaries = (pSum[b] as number) - (pSum[a] as number);
      const backups = (bSum[b] as number) - (bSum[a] as number);
      if (backups + 1 > this.maxExtraLoad * primaries + this.minBackupsPerWindow + 1e-9) {
        this.#refused++;
        return false;
      }
    }
    this.#backups[i] = (this.#backups[i] as number) + 1;
    this.#admitted++;
    return true;
  }

  /** Backups admitted and refused since construction. */
  stats(): { readonly admitted: number; readonly refused: number } {
    return { admitted: this.#admitted, refused: this.#refused };
  }

  #indexOf(at: number): number {
    let lo = 0;
    let hi = this.#at.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const t = this.#at[mid] as number;
      if (t === at) return mid;
      if (t < at) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Starts no window checked from `now` on can contain (older than two windows). */
  #evict(now: number): void {
    let k = 0;
    while (k < this.#at.length && (this.#at[k] as number) <= now - 2 * this.windowMs) k++;
    if (k === 0) return;
    this.#at = this.#at.slice(k);
    this.#primaries = this.#primaries.slice(k);
    this.#backups = this.#backups.slice(k);
  }
}

/** The first index of ascending `a` whose value is > x (a.length when none). */
function firstAbove(a: readonly number[], x: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
