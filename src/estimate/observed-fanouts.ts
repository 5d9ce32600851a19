import type { Clock } from "../clock/clock.js";
import type { LatencyBookOptions } from "./options.js";
import { PeerLatency } from "./peer-latency.js";
import type { InFlight, PeerId, Requirement } from "./types.js";

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
    const k = requirement.kind === "all" ? peers.length : requirement.k;
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
 * One fan-out being observed; the branch set reports each branch's end. While out, the fan-out is a call
 * in flight (a stuck fan-out raises the set's p99 before it ends). It ends as:
 * - the k-th answer (measurement branches' too: they say when the requirement *would* have been met):
 *   a completed sample at its time;
 * - every branch ended without it, one at its deadline: `timedOut()`, censored at deadline − start;
 * - otherwise one abandoned: `abandoned(age)`, censored at the largest age any branch was seen at;
 * - only failures: `failed()`, not a latency.
 */
export class ObservedFanout {
  private answers = 0;
  private open: number;
  private done = false;
  private sawDeadline = false;
  private sawAbandon = false;
  private maxAgeMs = 0;

  constructor(
    private readonly call: InFlight,
    private readonly startMs: number,
    private readonly k: number,
    branches: number,
  ) {
    this.open = branches;
  }

  /** A branch answered at `nowMs` (in time or not). */
  answered(nowMs: number): void {
    if (this.done) return;
    this.open--;
    this.answers++;
    const age = Math.max(0, nowMs - this.startMs);
    if (age > this.maxAgeMs) this.maxAgeMs = age;
    if (this.answers >= this.k) {
      this.done = true;
      this.call.complete(age);
      return;
    }
    this.maybeEnd();
  }

  /**
   * A branch ended without an answer: at its deadline, abandoned at `ageMs` after the fan-out began, or
   * failed (not a latency).
   */
  ended(how: "deadline" | "abandoned" | "failed", ageMs: number): void {
    if (this.done) return;
    this.open--;
    if (how === "deadline") this.sawDeadline = true;
    else if (how === "abandoned") this.sawAbandon = true;
    if (how !== "failed" && ageMs > this.maxAgeMs) this.maxAgeMs = ageMs;
    this.maybeEnd();
  }

  private maybeEnd(): void {
    // Wait for the last branch: while one is out at age c, the set needs longer than c (its latency does).
    if (this.open > 0) return;
    this.done = true;
    if (this.sawDeadline) this.call.timedOut();
    else if (this.sawAbandon) this.call.abandoned(this.maxAgeMs);
    else this.call.failed();
  }
}

/** The key of a required set: requirement and sorted peer ids (the same set in any order is one set). */
export function observedSetKey(peers: readonly PeerId[], requirement: Requirement): string {
  const head = requirement.kind === "all" ? "all" : `q${requirement.k}`;
  return `${head}\u0000${[...peers].sort().join("\u0000")}`;
}

function keyHasPeer(key: string, peer: PeerId): boolean {
  return `${key}\u0000`.includes(`\u0000${peer}\u0000`);
}
