import { TailswarmError } from "../errors.js";
import type { EstimatorOptions } from "./types.js";

/**
 * Options of a {@link LatencyBook}: the estimator contract plus the book's own bounds.
 *
 * @example
 * const book = new LatencyBook({ windowMs: 5_000, slices: 5, minSamples: 30 });
 */
export interface LatencyBookOptions extends EstimatorOptions {
  /** Calls tracked in flight per peer (censored samples); further calls still record on completion. Default 256. */
  maxInFlightPerPeer: number;
  /** Fan-out estimates are cached for this much clock time (0 disables the cache). Default 1. */
  fanoutTickMs: number;
  /** Bound on cached fan-out entries; the cache is cleared when it would grow past it. Default 1024. */
  maxCachedFanouts: number;
  /**
   * Required sets whose own completion time is observed per fan-out (`ObservedFanouts`); the least recently
   * used is dropped past this. 0 turns observation off (the fan-out estimate is then always Π F_i). Default 64.
   */
  observedFanoutSets: number;
  /**
   * A set's observed completion times are fresh with this many fan-outs in the window (the same rule as a
   * peer's `minSamples`, censored ones counted alike). Lower than `minSamples` by default: a set is sampled
   * once per fan-out, a peer once per branch, and the observed times only set the p50 (see LatencyBook).
   * Default 10.
   */
  observedMinSamples: number;
}

export const DEFAULT_WINDOW_MS = 10_000;

/** The defaults of every option; `maxSampleAgeMs` defaults to the window length. */
export function defaultOptions(windowMs = DEFAULT_WINDOW_MS): LatencyBookOptions {
  return {
    windowMs,
    slices: 6,
    minSamples: 20,
    maxSampleAgeMs: windowMs,
    highestTrackableMs: 60_000,
    maxInFlightPerPeer: 256,
    fanoutTickMs: 1,
    maxCachedFanouts: 1024,
    observedFanoutSets: 64,
    observedMinSamples: 10,
  };
}

type Check = (value: number) => boolean;

const positive: Check = (v) => Number.isFinite(v) && v > 0;
const nonNegative: Check = (v) => Number.isFinite(v) && v >= 0;
const intIn =
  (lo: number, hi: number): Check =>
  (v) =>
    Number.isInteger(v) && v >= lo && v <= hi;

const RULES: Record<keyof LatencyBookOptions, [Check, string]> = {
  windowMs: [positive, "a finite number of ms > 0"],
  slices: [intIn(1, 64), "an integer in [1, 64]"],
  minSamples: [intIn(1, 1_000_000), "an integer in [1, 1000000]"],
  maxSampleAgeMs: [positive, "a finite number of ms > 0"],
  highestTrackableMs: [
    (v) => Number.isFinite(v) && v >= 2 && v <= 2_000_000,
    "a number of ms in [2, 2000000] (µs counts must fit 31 bits)",
  ],
  maxInFlightPerPeer: [intIn(0, 65_536), "an integer in [0, 65536]"],
  fanoutTickMs: [nonNegative, "a finite number of ms >= 0"],
  maxCachedFanouts: [intIn(1, 1_000_000), "an integer in [1, 1000000]"],
  observedFanoutSets: [intIn(0, 4096), "an integer in [0, 4096]"],
  observedMinSamples: [intIn(1, 1_000_000), "an integer in [1, 1000000]"],
};

/**
 * Fills defaults and validates every key; a bad or unknown key throws `TailswarmError("INVALID_CONFIG")`
 * naming the key, the value and what was expected.
 */
export function resolveOptions(input: Partial<LatencyBookOptions> = {}): LatencyBookOptions {
  for (const key of Object.keys(input)) {
    if (!(key in RULES)) {
      throw new TailswarmError(
        "INVALID_CONFIG",
        `estimator option "${key}" is unknown; expected one of ${Object.keys(RULES).join(", ")}`,
      );
    }
  }
  const windowMs = input.windowMs ?? DEFAULT_WINDOW_MS;
  const merged: LatencyBookOptions = { ...defaultOptions(windowMs) };
  for (const [key, value] of Object.entries(input) as [keyof LatencyBookOptions, unknown][]) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  for (const [key, [check, expected]] of Object.entries(RULES) as [
    keyof LatencyBookOptions,
    [Check, string],
  ][]) {
    const value = merged[key] as unknown;
    if (typeof value !== "number" || !check(value)) {
      throw new TailswarmError(
        "INVALID_CONFIG",
        `estimator option "${key}" is ${typeof value === "string" ? JSON.stringify(value) : String(value)}; expected ${expected}`,
      );
    }
  }
  return merged;
}
