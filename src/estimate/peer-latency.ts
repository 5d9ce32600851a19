import type { Clock } from "../clock/clock.js";
import { CensoredCdf } from "./censored-cdf.js";
import { InFlightRegistry } from "./in-flight-registry.js";
import type { LatencyBookOptions } from "./options.js";
import type { InFlight, PeerEstimate, PeerId, UnknownReason } from "./types.js";
import { MAX_END_POINTS, WindowedCensored } from "./windowed-censored.js";
import { bucketOfUs, WindowedHistogram } from "./windowed-histogram.js";

/**
 * The age of a peer never heard from. A module constant, not the global `Infinity`: V8 reads a global in
 * a branch it has not run as a call, and the other branch's number is boxed to merge with it.
 */
const NEVER_MS = Infinity;

/**
 * The fresh latency of one peer: completed samples in a {@link WindowedHistogram}, and right-censored
 * observations ("latency > age") — calls in flight at their current age, calls cut at their deadline or
 * abandoned at their age then ({@link WindowedCensored}, on the same ring). `complete(ms?)` records a
 * sample, `timedOut()` and `abandoned(age?)` a censored end, `failed()` nothing.
 *
 * A quantile in the censored tail beyond the last completion is a `lower-bound` (with `horizonMs`): a
 * peer that only times out at 90 ms reads "p50 >= 90 ms", which a rule can act on, where a sample at
 * 90 ms would cap every estimate at the caller's own budget. When the estimate is fresh is decided in
 * one place, `refresh`. `reset()` (peer restart) forgets everything and ignores answers to calls begun
 * before it.
 *
 * The window is `windowMs` in time and `windowMinCompletions` in answers: while the last `windowMs` hold
 * fewer completions, older slices (samples and censored ends together) stay, newest first, up to
 * `windowMaxStretch` windows back. A peer called a few times a second never holds the 100 answers a p99
 * needs in a short window, so a slow answer would weigh far more than its share while it is in and then
 * vanish; kept longer, it weighs as one in up to `windowMaxStretch` windows' answers (at most
 * `windowMinCompletions`). A busy peer is
 * windowed by time alone, as fresh as before; calls in flight count at their age whatever the stretch.
 *
 * @example
 * const peer = new PeerLatency("p1", resolveOptions(), systemClock);
 * const call = peer.begin(systemClock.now(), systemClock.now() + 200);
 * // ... later
 * call.complete();
 * peer.estimate(systemClock.now()); // { status: "unknown", reason: "too-few-samples", ... } until minSamples
 */
export class PeerLatency {
  private readonly window: WindowedHistogram;
  private readonly inFlight: InFlightRegistry;
  private readonly ended: WindowedCensored;
  private readonly snapshot: CensoredCdf;
  private snapshotWindowVersion = -1;
  private snapshotFlightVersion = -1;
  private snapshotEndedVersion = -1;
  private snapshotNow = NaN;
  private flightVersion = 0;
  private generation = 0;
  private lastCompletedAt = -Infinity;
  /** Clock time of the newest censored end that was at or beyond the last completed bucket when it ended. */
  private lastTailEndAt = -Infinity;
  private newestInFlight = -Infinity;
  /** Untracked calls in flight the last `cdf` put in the tail (the CDF counts them among its ended points). */
  private untrackedTail = 0;
  /** Both windows' versions and slices when `advance` last trimmed them (nothing to trim until one changes). */
  private trimmedVersion = -1;
  private trimmedEpoch = -Infinity;
  private trimmedEndedVersion = -1;
  private trimmedEndedEpoch = -Infinity;
  private everSampled = false;
  private resetPending = false;
  /** Clock time of the newest call begun, sample or censored end (the active set's idle clock). */
  lastUsedAt = -Infinity;

  /** Bumped on every change a cached fan-out must see (a recorded sample, an ended call, a reset). */
  version = 0;
  /** Fields of the last `refresh`. */
  status: "fresh" | "unknown" = "unknown";
  reason: UnknownReason | undefined = "never-sampled";
  samples = 0;
  censored = 0;
  censoredEnds = 0;
  /** What counts toward `minSamples` (the freshness rule's left-hand side). */
  counted = 0;
  ageMs = Infinity;

  constructor(
    readonly peer: PeerId,
    private readonly options: LatencyBookOptions,
    private readonly clock: Clock,
  ) {
    const highestUs = options.highestTrackableMs * 1000;
    const slots = options.slices * (options.windowMinCompletions > 0 ? options.windowMaxStretch : 1);
    this.window = new WindowedHistogram(
      options.windowMs,
      options.slices,
      highestUs,
      options.maxSamplesPerPeer,
      slots,
    );
    this.inFlight = new InFlightRegistry(options.maxInFlightPerPeer);
    // the untracked calls in flight are one more point among the ended ones (`cdf`)
    this.snapshot = new CensoredCdf(options.maxInFlightPerPeer + MAX_END_POINTS + 1);
    this.ended = new WindowedCensored(
      options.windowMs,
      options.slices,
      highestUs,
      options.maxSamplesPerPeer,
      slots,
    );
  }

  /** Records a completed call of `latencyMs`, observed at clock time `nowMs`. NaN is ignored. */
  record(latencyMs: number, nowMs: number): void {
    if (Number.isNaN(latencyMs)) return;
    this.used(nowMs);
    this.window.record(latencyMs * 1000, nowMs);
    this.ended.advance(nowMs);
    if (nowMs > this.lastCompletedAt) this.lastCompletedAt = nowMs;
    this.everSampled = true;
    this.version++;
    if (this.resetPending && this.window.totalCount >= this.options.minSamples) this.resetPending = false;
  }

  /**
   * Records a call that ended without an answer after `ageMs` (cut at its deadline, or abandoned), observed
   * at clock time `nowMs`: a right-censored observation (latency > ageMs) kept in the window. NaN is ignored.
   */
  recordCensored(ageMs: number, nowMs: number): void {
    if (Number.isNaN(ageMs)) return;
    this.used(nowMs);
    const us = Math.max(0, ageMs) * 1000;
    this.ended.record(us, nowMs);
    this.window.advance(nowMs);
    if (bucketOfUs(us) >= this.window.highBucket() && nowMs > this.lastTailEndAt) this.lastTailEndAt = nowMs;
    this.everSampled = true;
    this.version++;
  }

  /**
   * Registers a call issued at `nowMs` with an absolute `deadlineMs` (epoch ms, optional). Until it ends it
   * counts as a censored sample of its current age.
   */
  begin(nowMs: number, deadlineMs?: number): InFlight {
    this.everSampled = true;
    this.used(nowMs);
    const slot = this.inFlight.add(nowMs);
    this.flightVersion++;
    return new InFlightCall(
      this,
      nowMs,
      deadlineMs,
      slot,
      slot >= 0 ? this.inFlight.token(slot) : 0,
      this.generation,
    );
  }

  /** Calls in flight now, untracked ones included (a peer with calls in flight is never idle). */
  get inFlightCount(): number {
    return this.inFlight.size + this.inFlight.untracked;
  }

  /** Calls in flight past `maxInFlightPerPeer`: each counts as censored at the youngest one's age. */
  get untrackedInFlight(): number {
    return this.inFlight.untracked;
  }

  /** How the CDF has been refreshed so far: whole rebuilds and in-place moves (`CensoredCdf.stats`). */
  get cdfStats(): { readonly rebuilds: number; readonly moves: number } {
    return this.snapshot.stats;
  }

  /** Samples and censored ends dropped because the window held `maxSamplesPerPeer` of them. */
  get droppedSamples(): number {
    return this.window.dropped + this.ended.dropped;
  }

  /** Forgets every sample and call: the peer restarted. */
  reset(): void {
    this.window.reset();
    this.ended.reset();
    this.inFlight.reset();
    this.generation++;
    this.flightVersion++;
    this.lastCompletedAt = -Infinity;
    this.lastTailEndAt = -Infinity;
    this.resetPending = true;
    this.version++;
  }

  /** The estimate at `nowMs`. */
  estimate(nowMs: number): PeerEstimate {
    this.refresh(nowMs);
    const cdf = this.snapshot;
    const e: PeerEstimate = {
      peer: this.peer,
      status: this.status,
      p50Ms: cdf.empty ? NaN : cdf.quantile(0.5),
      p99Ms: cdf.empty ? NaN : cdf.quantile(0.99),
      p50Kind: cdf.lowerBound(0.5) ? "lower-bound" : "known",
      p99Kind: cdf.lowerBound(0.99) ? "lower-bound" : "known",
      horizonMs: cdf.horizonMs,
      samples: this.samples,
      censored: this.censored,
      censoredEnds: this.censoredEnds,
      ageMs: this.ageMs,
    };
    return this.reason === undefined ? e : { ...e, reason: this.reason };
  }

  /** P(latency <= tMs) at `nowMs`, censored calls included; 0 when nothing is known. */
  cdfAt(tMs: number, nowMs: number): number {
    return this.cdf(nowMs).at(tMs);
  }

  /** The CDF at `nowMs`. The object is reused by the next call: read it, do not keep it. */
  cdf(nowMs: number): CensoredCdf {
    this.advance(nowMs);
    const windowVersion = this.window.version;
    const endedVersion = this.ended.version;
    const hasFlights = this.inFlightCount > 0;
    if (
      windowVersion === this.snapshotWindowVersion &&
      endedVersion === this.snapshotEndedVersion &&
      this.flightVersion === this.snapshotFlightVersion &&
      (!hasFlights || nowMs === this.snapshotNow)
    ) {
      return this.snapshot;
    }
    let count = 0;
    this.newestInFlight = -Infinity;
    if (hasFlights) {
      count = this.inFlight.ages(nowMs, this.options.windowMs);
      this.newestInFlight = Math.max(this.inFlight.newestStartMs, this.inFlight.untrackedNewestStartMs);
    }
    // the untracked calls as one weighted censored point at the youngest one's age (<= each one's own)
    const untracked = this.inFlight.untracked;
    const untrackedUs = untracked > 0 ? Math.floor((nowMs - this.inFlight.untrackedNewestStartMs) * 1000) : 0;
    this.ended.setExtra(untrackedUs, untracked);
    this.untrackedTail = untracked > 0 && bucketOfUs(untrackedUs) >= this.window.highBucket() ? untracked : 0;
    this.censored = count + untracked;
    this.censoredEnds = this.ended.totalCount;
    this.snapshot.update(this.window, this.inFlight.agesMs, count, this.ended);
    this.snapshotWindowVersion = windowVersion;
    this.snapshotEndedVersion = endedVersion;
    this.snapshotFlightVersion = this.flightVersion;
    this.snapshotNow = nowMs;
    return this.snapshot;
  }

  /**
   * Recomputes the public fields for `nowMs` (cheap when nothing changed); the quantiles are not among
   * them, so a fan-out estimate does not pay two quantile searches per peer. The freshness rule:
   *   something ended in the window (completed or censored),
   *   completed + inFlight + tailEnds + min(innerEnds, completed) >= minSamples,
   *   the newest completion, call in flight or tail end is at most `maxSampleAgeMs` old.
   * Tail ends (censored at or beyond the last completed bucket) are observations of the tail the
   * lower-bound quantiles rest on, so they count fully and make the estimate recent. An inner end only
   * says how mass is shared among the completions above it (Kaplan–Meier): it counts at most once per
   * completion, so a `known` quantile always rests on completions, and it does not make the estimate
   * recent. A window of only calls in flight is never fresh.
   */
  refresh(nowMs: number): void {
    const cdf = this.cdf(nowMs);
    this.samples = this.window.totalCount;
    const newest = Math.max(this.lastCompletedAt, this.newestInFlight, this.lastTailEndAt);
    this.ageMs = newest === -Infinity ? NEVER_MS : Math.max(0, nowMs - newest);
    const o = this.options;
    // The freshness rule above.
    // the CDF reads the untracked calls as an ended point: in the tail, they are calls in flight here
    const tailEnds = cdf.endedTailWeight - this.untrackedTail;
    const innerEnds = this.censoredEnds - tailEnds;
    this.counted = this.samples + this.censored + tailEnds + Math.min(innerEnds, this.samples);
    const ended = this.samples + this.censoredEnds;
    if (ended >= 1 && this.counted >= o.minSamples && this.ageMs <= o.maxSampleAgeMs) {
      this.status = "fresh";
      this.reason = undefined;
      this.resetPending = false;
      return;
    }
    this.status = "unknown";
    if (this.resetPending) this.reason = "peer-reset";
    else if (!this.everSampled) this.reason = "never-sampled";
    else if (this.ageMs > o.maxSampleAgeMs) this.reason = "no-recent-sample";
    else this.reason = "too-few-samples";
  }

  /**
   * Heap bytes of this peer's estimator: its windows, calls in flight and CDF, and this object with the
   * numbers it boxes (`footprint.ts`).
   */
  get estimatedFootprintInBytes(): number {
    return (
      this.window.estimatedFootprintInBytes +
      this.ended.estimatedFootprintInBytes +
      this.inFlight.estimatedFootprintInBytes +
      this.snapshot.estimatedFootprintInBytes +
      // this object (276 bytes) and the 10 numbers it boxes (16 each)
      276 +
      10 * 16
    );
  }

  /**
   * Moves both windows to `nowMs`: the last `windowMs`, and the older slices (newest first) that bring the
   * completions to `windowMinCompletions` — samples and censored ends of a slice leave together. Every
   * write moves both rings to its slice (`record`, `recordCensored`), so they stand on the same one; the
   * trim runs here, on a read, and is skipped only while neither ring changed since the last one.
   */
  private advance(nowMs: number): void {
    const w = this.window;
    const ended = this.ended;
    w.advance(nowMs);
    ended.advance(nowMs);
    if (
      w.slots === w.slices ||
      (w.version === this.trimmedVersion &&
        w.currentEpoch === this.trimmedEpoch &&
        ended.version === this.trimmedEndedVersion &&
        ended.currentEpoch === this.trimmedEndedEpoch)
    )
      return;
    const from = w.keepFrom(this.options.windowMinCompletions);
    w.dropBefore(from);
    ended.dropBefore(from);
    this.trimmedVersion = w.version;
    this.trimmedEpoch = w.currentEpoch;
    this.trimmedEndedVersion = ended.version;
    this.trimmedEndedEpoch = ended.currentEpoch;
  }

  private used(nowMs: number): void {
    if (nowMs > this.lastUsedAt) this.lastUsedAt = nowMs;
  }

  /** @internal Ends a call begun by this peer: a sample, a censored observation, or nothing. */
  end(call: InFlightCall, latencyMs: number | undefined, censoredAgeMs?: number): void {
    if (call.generation !== this.generation) return;
    if (call.slot >= 0) this.inFlight.remove(call.slot, call.token);
    else this.inFlight.removeUntracked(call.start);
    this.flightVersion++;
    this.version++;
    if (latencyMs !== undefined) this.record(latencyMs, this.clock.now());
    else if (censoredAgeMs !== undefined) this.recordCensored(censoredAgeMs, this.clock.now());
  }

  /** @internal */
  now(): number {
    return this.clock.now();
  }
}

/** The handle of one call in flight; exactly one end counts. */
class InFlightCall implements InFlight {
  private done = false;

  constructor(
    private readonly owner: PeerLatency,
    readonly start: number,
    readonly deadline: number | undefined,
    readonly slot: number,
    readonly token: number,
    readonly generation: number,
  ) {}

  complete(latencyMs?: number): void {
    if (this.done) return;
    this.done = true;
    this.owner.end(this, latencyMs ?? this.owner.now() - this.start);
  }

  timedOut(): void {
    if (this.done) return;
    this.done = true;
    const at = this.deadline ?? this.owner.now();
    this.owner.end(this, undefined, Math.max(0, at - this.start));
  }

  abandoned(ageMs?: number): void {
    if (this.done) return;
    this.done = true;
    this.owner.end(this, undefined, ageMs ?? Math.max(0, this.owner.now() - this.start));
  }

  failed(): void {
    if (this.done) return;
    this.done = true;
    this.owner.end(this, undefined);
  }
}
