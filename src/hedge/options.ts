/** Defaults and ranges of the hedging options (the policies' knobs and the extra-load ceiling). */
import { intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";

export interface HedgeOptions {
  /** `gated`: re-examine an outstanding branch this often, ms. */
  checkEveryMs: number;
  /** The extra-load ceiling: backups per primary branch, over any window of `ceilingWindowMs`. */
  maxExtraLoad: number;
  /** The ceiling's window, ms. */
  ceilingWindowMs: number;
  /** Backups any window admits beyond `maxExtraLoad × primaries` (like Finagle's minRetriesPerSec). */
  minBackupsPerWindow: number;
}

export const HEDGE_DEFAULTS: Readonly<HedgeOptions> = Object.freeze({
  // a fifth of a fast replica's median: fine enough to catch a primary entering its tail
  checkEveryMs: 5,
  // Finagle's documented example budget
  maxExtraLoad: 0.05,
  ceilingWindowMs: 10_000,
  minBackupsPerWindow: 1,
});

export const HEDGE_RANGES: Readonly<Record<keyof HedgeOptions, NumberRange>> = Object.freeze({
  checkEveryMs: numberAbove(0, 60_000),
  maxExtraLoad: numberRange(0, 1),
  ceilingWindowMs: numberAbove(0, 3_600_000),
  minBackupsPerWindow: intRange(0, 1_000_000),
});
