import type { Clock } from "../clock/clock.js";
import type { LatencyBookOptions } from "./options.js";
import { PeerLatency } from "./peer-latency.js";
import type { InFlight, PeerId, Requirement } from "./types.js";
import { requiredAnswers } from "./types.js";

/**
 * The fan-out's own completion time, observed per required set (requirement + sorted peer ids): the time
 * until the requirement was met, kept in a {@link PeerLatency} per set, so it is fresh, windowed and
 * censoring-aware like one peer's latency. At most `maxSets` sets, least recently begun dropped first.
 * A set's window stretches like a peer's (`windowMinCompletions`): a set fanned out a few times a
 * second never holds the 100 fan-outs a p99 needs within `windowMs` either.
 *
 * Why: the fan-out quantiles from per-peer CDFs (`fanoutCdfAt`) assume the peers independent (Π F_i).
 * Peers behind one congested gateway queue together, so their tails correlate and the product puts the
 * fan-out's median far too late; the observed time sees the correlation, whatever its shape. How one
 * fan-out ends the observation is `ObservedFanout`'s contract below.
 *
 * @example
 * const observed = new ObservedFanouts(resolveOptions(), 64, clock);
 * const fanout = observed.begin(["a", "b"], { kind: "all" }, clock.now(), deadline);
 * // ... each branch end:
 * fanout.answered(now); fanout.ended("abandoned", ageMs);
 */
export class ObservedFanouts {
  private readonly sets = new Map<string, PeerLatency>();
  private readonly options: LatencyBookOptions;

  /** `options.observedMinSamples` is the sets' `minSamples`. */
  constructor(
    options: LatencyBookOptions,
    readonly maxSets: number,
    private readonly clock: Clock,
  ) {
    this.options = { ...options, minSamples: options.observedMinSamples };
  }

  /** The tracker of a set, or undefined when no fan-out to it was begun (or it was dropped). */
  get(key: string): PeerLatency | undefined {
    return this.sets.get(key);
  }

  /**
   * Starts observing one fan-out to `peers` issued at `nowMs`; undefined when observation is off. `key` is
   * the set's `observedSetKey`, for a caller that has it already.
   */
  begin(
    peers: readonly PeerId[],
    requirement: Requirement,
    nowMs: number,
    deadlineMs: number,
    key?: string,
  ): ObservedFanout | undefined {
    if (this.maxSets === 0 || peers.length === 0) return undefined;
    key ??= observedSetKey(peers, requirement);
    let set = this.sets.get(key);
    if (set === undefined) {
      if (this.sets.size >= this.maxSets) {
        const oldest = this.sets.keys().next().value as string;
        this.sets.delete(oldest);
      }
      set = new PeerLatency(key, this.options, this.clock);
    } else {
      this.sets.delete(key); // re-insert: the Map's order is the order sets were last begun in
    }
    this.sets.set(key, set);
    const k = requiredAnswers(requirement, peers.length);
    return new ObservedFanout(set.begin(nowMs, deadlineMs), nowMs, k, peers.length);
  }

  /** Forgets every set containing `peer` (it restarted or left): its fan-outs start fresh. True if any was. */
  forgetPeer(peer: PeerId): boolean {
    let any = false;
    for (const key of [...this.sets.keys()]) {
      if (!keyHasPeer(key, peer)) continue;
      this.sets.delete(key);
      any = true;
    }
    return any;
  }

  get size(): number {
    return this.sets.size;
  }

  get estimatedFootprintInBytes(): number {
    let bytes = 0;
    for (const s of this.sets.values()) bytes += s.estimatedFootprintInBytes;
    return bytes;
  }
}

/**
 * One fan-out being observed; the branch set reports each branch's end, horizon probes' late ends too.
 * The fan-out takes T = the k-th smallest of its branches' latencies (a branch that failed never answers).
 * Each ended branch gives a lower bound of its latency: an answer (in time, late, or a probe's), exactly
 * its time; a branch cut or abandoned at age a (a probe: expired), a; a failure, none finite. The
 * observation records the k-th smallest of those bounds — never above T, whatever the dependence between
 * peers:
 * - until k branches have answered or been cut it is a call in flight at its age (T > age: at most k − 1
 *   branches can have answered by now, the ones still out answer later);
 * - once k have, the k-th smallest bound no longer grows (each is at most its end's age, the branches
 *   still out are older): it ends, a completed sample when it is the k-th answer and no cut branch's bound
 *   lies below it, else censored there. For all of n that is once every branch ended: a fan-out whose cut
 *   branches ran on as probes is censored at the latest probe completion, or complete if every one did;
 * - a fan-out whose branches only answered or failed without meeting the requirement: `failed()`, not a
 *   latency.
 */
export class ObservedFanout {
  /** Ended branches' lower bounds, ms after the fan-out began (a failure: Infinity, it never answers). */
  private readonly bounds: Float64Array;
  /** Answer times, ms after the fan-out began. */
  private readonly answerTimes: Float64Array;
  private endedCount = 0;
  private answerCount = 0;
  /** Ended with a finite bound (answered or cut). */
  private finite = 0;
  private sawCut = false;
  private done = false;

  constructor(
    private readonly call: InFlight,
    private readonly startMs: number,
    private readonly k: number,
    branches: number,
  ) {
    this.bounds = new Float64Array(branches);
    this.answerTimes = new Float64Array(branches);
  }

  /**
   * A branch answered at `nowMs` (in time or not). `cut`: it had been cut at the deadline and answered as a
   * probe, so the fan-out was cut (censored, never dropped, if too few others answer).
   */
  answered(nowMs: number, cut = false): void {
    if (this.done || this.endedCount >= this.bounds.length) return;
    if (cut) this.sawCut = true;
    const age = Math.max(0, nowMs - this.startMs);
    this.answerTimes[this.answerCount++] = age;
    this.end(age, age);
  }

  /**
   * A branch ended without an answer: cut at its deadline or abandoned at `ageMs` after the fan-out began
   * (a probe: at its own end), or failed (it never answers); `ageMs` is the branch's age at its end.
   */
  ended(how: "deadline" | "abandoned" | "failed", ageMs: number): void {
    if (this.done || this.endedCount >= this.bounds.length) return;
    if (how === "failed") {
      this.bounds[this.endedCount++] = Infinity;
      this.maybeEnd(ageMs);
      return;
    }
    this.sawCut = true;
    this.end(Math.max(0, ageMs), ageMs);
  }

  private end(bound: number, ageMs: number): void {
    this.bounds[this.endedCount++] = bound;
    this.finite++;
    this.maybeEnd(ageMs);
  }

  private maybeEnd(ageMs: number): void {
    const open = this.bounds.length - this.endedCount;
    if (this.finite < this.k && open > 0) return; // fewer than k ended: in flight, T > its age
    this.done = true;
    if (this.finite < this.k) {
      // every branch ended, too few answered or were cut (failures): the requirement was never met
      if (!this.sawCut) this.call.failed();
      else this.call.abandoned(largestFinite(this.bounds));
      return;
    }
    // the branches still out are at least as old as this end: at `ageMs` they bound nothing lower
    const bound = kthSmallest(this.bounds.fill(Math.max(0, ageMs), this.endedCount), this.k);
    const exact =
      this.answerCount >= this.k &&
      kthSmallest(this.answerTimes.subarray(0, this.answerCount), this.k) === bound;
    if (exact) this.call.complete(bound);
    else this.call.abandoned(bound);
  }
}

/** The k-th smallest of `values` (sorts them in place). */
function kthSmallest(values: Float64Array, k: number): number {
  return values.sort()[k - 1] as number;
}

function largestFinite(values: Float64Array): number {
  let max = 0;
  for (const v of values) if (v !== Infinity && v > max) max = v;
  return max;
}

/** The key of a required set: requirement and sorted peer ids (the same set in any order is one set). */
export function observedSetKey(peers: readonly PeerId[], requirement: Requirement): string {
  const head = requirement.kind === "all" ? "all" : `q${requirement.k}`;
  return `${head}\u0000${[...peers].sort().join("\u0000")}`;
}

function keyHasPeer(key: string, peer: PeerId): boolean {
  return `${key}\u0000`.includes(`\u0000${peer}\u0000`);
}
