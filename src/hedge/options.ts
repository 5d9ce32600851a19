/** Defaults and ranges of the hedging options (the policies' knobs and the extra-load ceiling). */
import { intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";

export interface HedgeOptions {
  /** `fixed-delay`: send a backup once the branch has been out this long, ms (gRPC A6 `hedgingDelay`). */
  delayMs: number;
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
  // The Tail at Scale's example: hedge after 10 ms
  delayMs: 10,
  // a fifth of a fast replica's median: fine enough to catch a primary entering its tail
  checkEveryMs: 5,
  // Finagle's documented example budget
  maxExtraLoad: 0.05,
  ceilingWindowMs: 10_000,
  minBackupsPerWindow: 1,
});

export const HEDGE_RANGES: Readonly<Record<keyof HedgeOptions, NumberRange>> = Object.freeze({
  delayMs: numberAbove(0, 60_000),
  checkEveryMs: numberAbove(0, 60_000),
  maxExtraLoad: numberRange(0, 1),
  ceilingWindowMs: numberAbove(0, 3_600_000),
  minBackupsPerWindow: intRange(0, 1_000_000),
});
