/** Contract of src/estimate — the fresh, windowed, censoring-aware latency estimates. */

export type PeerId = string;

/** Defaults and ranges: `LATENCY_BOOK_DEFAULTS` and `LATENCY_BOOK_RANGES` in ./options.ts. */
export interface EstimatorOptions {
  /** Length of the sliding window in ms; choose it shorter than the tail's correlation time. */
  windowMs: number;
  /**
   * Sub-window histograms in the ring; staleness is bounded by windowMs * (1 + 1/slices) (times the
   * book's `windowMaxStretch` while a peer's window holds fewer than `windowMinCompletions` answers).
   */
  slices: number;
  /** Fewer samples than this in the window makes the estimate unknown. */
  minSamples: number;
  /** No sample (completed or censored) for longer than this makes the estimate unknown. Default: windowMs. */
  maxSampleAgeMs: number;
  /** Largest latency tracked, ms; larger inputs are clamped. */
  highestTrackableMs: number;
}

export type UnknownReason = "never-sampled" | "too-few-samples" | "no-recent-sample" | "peer-reset";

/**
 * What a quantile is: `known` — the estimate from observed completions (Kaplan–Meier where calls were
 * censored among them); `lower-bound` — it falls in censored mass beyond the last completed observation
 * (calls cut at their deadline, abandoned, or still in flight, each only known to take longer than its
 * age), so the true quantile is at least this value, possibly much more. A rule must never read a
 * lower-bound p99 as "the tail fits"; a lower-bound p50 at or above the budget still says "the median does
 * not fit".
 */
export type QuantileKind = "known" | "lower-bound";

/** The estimate of one peer at one moment. p50Ms/p99Ms are NaN when unknown and nothing was ever seen. */
export interface PeerEstimate {
  readonly peer: PeerId;
  readonly status: "fresh" | "unknown";
  readonly reason?: UnknownReason;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Whether each quantile is known or only a lower bound (see `QuantileKind`); absent means known. */
  readonly p50Kind?: QuantileKind;
  readonly p99Kind?: QuantileKind;
  /**
   * The horizon, ms: the smallest censoring time at or beyond the last completed observation — where the
   * window stops seeing completions and holds only lower bounds. Infinity when no censored observation
   * lies beyond the completions (every quantile known). Absent from estimators that do not censor.
   */
  readonly horizonMs?: number;
  /** Completed samples in the window. */
  readonly samples: number;
  /** Calls in flight counted as right-censored samples at their current age. */
  readonly censored: number;
  /**
   * Calls that ended without an answer — cut at their deadline (`InFlight.timedOut`) or abandoned
   * (`InFlight.abandoned`) — kept in the window as right-censored observations at their age then. See
   * `PeerLatency` for how they count toward `minSamples`. Absent from estimators that do not keep them.
   */
  readonly censoredEnds?: number;
  /** ms since the newest sample was recorded (Infinity when none). */
  readonly ageMs: number;
}

/** Which peers must answer before the fan-out is decidable: all of them, or any k. */
export type Requirement = { readonly kind: "all" } | { readonly kind: "quorum"; readonly k: number };

/** Answers a requirement needs of `n` branches: all of them, or its quorum's k. */
export function requiredAnswers(requirement: Requirement, n: number): number {
  return requirement.kind === "all" ? n : requirement.k;
}

export interface FanoutEstimate {
  readonly status: "fresh" | "unknown";
  /** Peers whose own estimate is unknown (any one makes the fan-out unknown). */
  readonly unknownPeers: readonly PeerId[];
  readonly p50Ms: number;
  readonly p99Ms: number;
  /**
   * Whether each fan-out quantile is known or only a lower bound; absent means known (sources that do not
   * censor). A fan-out quantile at or beyond the smallest horizon among the CDFs it was computed from is a
   * lower bound (see `LatencyBook.fanout`).
   */
  readonly p50Kind?: QuantileKind;
  readonly p99Kind?: QuantileKind;
  /**
   * The smallest horizon among the CDFs the quantiles were read from (the members' and, on the observed
   * basis, the set's own), ms; Infinity when none has censored mass beyond its completions. For
   * explanations: the kinds, not a comparison with this, say what each quantile is.
   */
  readonly horizonMs?: number;
  readonly requirement: Requirement;
  readonly size: number;
  /**
   * Oldest estimate age among the set, and the smallest count toward `minSamples` (completed, in flight and
   * the censored ends the freshness rule counts): what the decision rests on.
   */
  readonly maxAgeMs: number;
  readonly minSamples: number;
  /** The smallest count of completed samples in the set (calls in flight not counted). */
  readonly minCompletedSamples?: number;
  /**
   * Where p50/p99 come from: `observed` — the set's own completion times, observed per fan-out (they see
   * peers whose tails are correlated); `independent` — Π F_i of the per-peer CDFs, used while the set has
   * no fresh observed estimate. Absent from sources that only compute the latter.
   */
  readonly basis?: "observed" | "independent";
  /** Fan-outs to this set completed in the window (0 when none was observed). */
  readonly observedSamples?: number;
  /**
   * On an unknown estimate: a floor of the set's p50, ms — the largest p50 floor (`CensoredCdf.p50FloorMs`:
   * a 90 % lower confidence bound of the median by the sign test, calls cut short counted only up to their
   * age) of the set's own observed fan-outs and, when it needs every answer, of each member, thin or fresh
   * (the fan-out waits for each of them, whatever their dependence); a source last heard from over
   * `maxSampleAgeMs` ago gives none. Where the set's own known median is below it, the set's own floor.
   * Absent when there is none. The one number the rule degrades an unknown estimate on.
   */
  readonly p50FloorMs?: number;
}

/** A call in flight. Exactly one of the four ends counts; later calls are ignored. */
export interface InFlight {
  /** The answer arrived after `latencyMs` (measured by the caller, or now − start when omitted). */
  complete(latencyMs?: number): void;
  /**
   * The call hit its deadline without an answer: its latency is only known to exceed deadline − start
   * (now − start without a deadline). Kept in the window as a right-censored observation, never a sample:
   * a sample at the deadline would cap every estimate at the caller's own budget.
   */
  timedOut(): void;
  /**
   * The caller stopped waiting after `ageMs` (default now − start) without an answer — the decision was
   * settled without it, or the caller gave up — and cancelled the call. Its latency is only known to exceed
   * `ageMs`: kept in the window as a right-censored observation (it can raise quantiles, never lower them).
   */
  abandoned(ageMs?: number): void;
  /** A fast failure (refused, unavailable, bad answer): not a latency; only clears the censoring. */
  failed(): void;
}
