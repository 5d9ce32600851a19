import { invalid } from "../errors.js";
import { checkRange, intRange, numberAbove, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { EstimatorOptions } from "./types.js";

/**
 * Options of a {@link LatencyBook}: the estimator contract plus the book's own bounds. Each option's
 * default and range are in `LATENCY_BOOK_DEFAULTS` and `LATENCY_BOOK_RANGES` (the node's `estimator.*`
 * config keys read them from there).
 *
 * @example
 * const book = new LatencyBook({ windowMs: 5_000, slices: 5, minSamples: 30 });
 */
export interface LatencyBookOptions extends EstimatorOptions {
  /**
   * Calls tracked in flight per peer (censored samples); further calls are not censored while out and still
   * record when they end (a sample, or a censored end). Each costs about 60 bytes (its slot and its point
   * in the CDF): at the default 24, a peer holds at most 16 KiB whatever its state (docs/scaling.md).
   */
  maxInFlightPerPeer: number;
  /** Fan-out estimates are cached for this much clock time (0 disables the cache). */
  fanoutTickMs: number;
  /** Bound on cached fan-out entries; the cache is cleared when it would grow past it. */
  maxCachedFanouts: number;
  /**
   * Required sets whose own completion time is observed per fan-out (`ObservedFanouts`); the least recently
   * used is dropped past this. 0 turns observation off (the fan-out estimate is then always Π F_i).
   */
  observedFanoutSets: number;
  /**
   * A set's observed completion times are fresh with this many fan-outs in the window (the same rule as a
   * peer's `minSamples`, censored ones counted alike). Lower than `minSamples` by default: a set is sampled
   * once per fan-out, a peer once per branch, and the observed times only set the p50 (see LatencyBook).
   */
  observedMinSamples: number;
  /**
   * Completed samples (and, separately, censored ends) a peer's window holds at most; past it the oldest
   * are dropped. It bounds a peer's memory: 2 bytes per sample or censored end (see `WindowedHistogram`,
   * `WindowedCensored`).
   */
  maxSamplesPerPeer: number;
  /**
   * A peer with no call begun, sample or censored end for this long leaves the active set: its estimate
   * is dropped (it costs nothing until the next call). Default: 3 × windowMs (`defaultOptions`).
   */
  activeIdleMs: number;
  /** Peers tracked at most (the active set's bound); the least recently used one leaves past it. */
  maxActivePeers: number;
  /**
   * Completed samples a peer's window holds before it forgets by time alone: while the last `windowMs`
   * hold fewer, the window keeps older slices, newest first, as many as bring it to this many, up to
   * `windowMaxStretch` windows back. A q-quantile needs 1 / (1 − q) completions (100 for the p99, see
   * `tooFewFor`), and a tail answer seen once should weigh as one in up to `windowMaxStretch` windows'
   * answers (at most this many), not vanish after `windowMs` when a peer is called a few times a second.
   * Observed fan-out sets stretch alike. 0 turns it off (the window is time only).
   */
  windowMinCompletions: number;
  /** How far back the window may keep slices for `windowMinCompletions`, in windows (1: never past `windowMs`). */
  windowMaxStretch: number;
}

/** Options whose default is derived from `windowMs` (`defaultOptions`). */
type Derived = "maxSampleAgeMs" | "activeIdleMs";

/**
 * Every option's default; `maxSampleAgeMs` defaults to the window length and `activeIdleMs` to three
 * windows (`defaultOptions`).
 */
export const LATENCY_BOOK_DEFAULTS: Readonly<Omit<LatencyBookOptions, Derived>> = {
  windowMs: 10_000,
  slices: 6,
  minSamples: 20,
  highestTrackableMs: 60_000,
  maxInFlightPerPeer: 24,
  fanoutTickMs: 1,
  maxCachedFanouts: 1024,
  observedFanoutSets: 64,
  observedMinSamples: 10,
  maxSamplesPerPeer: 1024,
  maxActivePeers: 1024,
  windowMinCompletions: 100,
  windowMaxStretch: 3,
};

/** How many windows a peer may stay idle in the active set by default. */
export const ACTIVE_IDLE_WINDOWS = 3;

/** The values each option accepts. */
export const LATENCY_BOOK_RANGES: Readonly<Record<keyof LatencyBookOptions, NumberRange>> = {
  windowMs: intRange(100, 3_600_000),
  slices: intRange(1, 64),
  minSamples: intRange(1, 1_000_000),
  maxSampleAgeMs: numberAbove(0),
  // µs counts must fit 31 bits
  highestTrackableMs: numberRange(2, 2_000_000),
  maxInFlightPerPeer: intRange(0, 65_536),
  fanoutTickMs: numberRange(0),
  maxCachedFanouts: intRange(1, 1_000_000),
  observedFanoutSets: intRange(0, 4096),
  observedMinSamples: intRange(1, 1_000_000),
  // 16-bit counters (WindowedHistogram)
  maxSamplesPerPeer: intRange(16, 65_535),
  activeIdleMs: numberAbove(0),
  maxActivePeers: intRange(1, 1_000_000),
  windowMinCompletions: intRange(0, 65_535),
  // the ring holds slices × windowMaxStretch slots per peer, twice (see MAX_STRETCH_SLOTS)
  windowMaxStretch: intRange(1, 16),
};

/**
 * The most slots a stretched ring may hold (`slices × windowMaxStretch`): each costs 4 bytes per peer (a
 * 2-byte count in the samples and the ends ring), and the trim after a change walks the older ones.
 */
export const MAX_STRETCH_SLOTS = 192;

/**
 * The cross-key check of the stretch: `windowMaxStretch` so large that `slices × windowMaxStretch` passes
 * {@link MAX_STRETCH_SLOTS}; the `expected` text, or undefined when it fits (or the stretch is off).
 */
export function stretchSlotsProblem(o: {
  slices: number;
  windowMaxStretch: number;
  windowMinCompletions: number;
}): string | undefined {
  if (o.windowMinCompletions === 0 || o.slices * o.windowMaxStretch <= MAX_STRETCH_SLOTS) return undefined;
  const most = Math.max(1, Math.floor(MAX_STRETCH_SLOTS / o.slices));
  return `at most ${most} (slices ${o.slices} × windowMaxStretch <= ${MAX_STRETCH_SLOTS} ring slots per peer)`;
}

export const DEFAULT_WINDOW_MS = LATENCY_BOOK_DEFAULTS.windowMs;

/** The defaults of every option for a window of `windowMs`. */
export function defaultOptions(windowMs = DEFAULT_WINDOW_MS): LatencyBookOptions {
  return {
    ...LATENCY_BOOK_DEFAULTS,
    windowMs,
    maxSampleAgeMs: windowMs,
    activeIdleMs: ACTIVE_IDLE_WINDOWS * windowMs,
  };
}

/**
 * Fills defaults and validates every key; a bad or unknown key throws `TailswarmError("INVALID_CONFIG")`
 * in the one message style, naming `estimator.<key>`.
 */
export function resolveOptions(input: Partial<LatencyBookOptions> = {}): LatencyBookOptions {
  const known = Object.keys(LATENCY_BOOK_RANGES);
  for (const [key, value] of Object.entries(input)) {
    if (!known.includes(key)) {
      throw invalid(`estimator.${key}`, value, `a known option (one of ${known.join(", ")})`, {
        code: "INVALID_CONFIG",
      });
    }
  }
  const merged: LatencyBookOptions = { ...defaultOptions(input.windowMs ?? DEFAULT_WINDOW_MS) };
  for (const [key, value] of Object.entries(input) as [keyof LatencyBookOptions, unknown][]) {
    if (value !== undefined) (merged as unknown as Record<string, unknown>)[key] = value;
  }
  for (const [key, range] of Object.entries(LATENCY_BOOK_RANGES) as [
    keyof LatencyBookOptions,
    NumberRange,
  ][]) {
    checkRange(`estimator.${key}`, merged[key], range);
  }
  const stretch = stretchSlotsProblem(merged);
  if (stretch !== undefined)
    throw invalid("estimator.windowMaxStretch", merged.windowMaxStretch, stretch, { code: "INVALID_CONFIG" });
  return merged;
}
