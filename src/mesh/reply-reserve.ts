/**
 * The reserve a coordinating node keeps from the caller's deadline so that its reply arrives in time:
 * `transitMs` (`deadlineReserveMs`) plus the p99 of its own measured decide-and-reply overhead over a
 * window plus its event loop's recent lateness, bounded by `[minMs, min(maxMs, maxShare × the call's
 * time left)]`.
 *
 * One overhead sample per Coordinate reply: the time from the end of the fan-out's wait — its deadline,
 * or the fan-out's end when it ended earlier — to the reply handed to gRPC and the turns that write it.
 * It holds a deadline timer that fires late on a busy event loop, scoring the answers, encoding the reply.
 * It cannot hold the transit either side of the node: the caller's deadline starts before the request is
 * read here (grpc-timeout is measured from arrival) and ends after the reply is read there. `transitMs`
 * is kept for that, fixed, since the node never sees it. With fewer than `MIN_SAMPLES` samples in the
 * window there is no p99 to speak of: the largest overhead seen stands in (kind `prior`).
 *
 * Nor can the overhead hold the lateness of the read itself: grpc-js starts the call's deadline when the
 * loop reads the headers, so a request that arrived during a stall starts its deadline late by up to the
 * stall, and the node's deadline is that much later than the caller's. No call carries how late it was
 * read; the loop's lateness (`loopLateMs`: the larger of the event-loop delay p99 and the stall this
 * turn's read met, src/node/event-loop-delay.ts) stands in for it, added to the overhead under the same
 * caps. It is read per call, not cached with the overhead: a cached value would hide the fresh stall.
 *
 * The share bound scales the cap with the call: a busy loop's overhead p99 may exceed a short call's
 * whole budget, and a reserve that took it all would refuse every such call on arrival (even one that
 * would only degrade); capped at a share, the call keeps the rest for its fan-out or its degrade, and the
 * reserve says it wanted more (`wantedMs`): a reply that then misses, misses on the machine's overhead.
 *
 * The window constants are fixed, not config keys: they shape the estimate (how fast it forgets a stall,
 * how much it costs), not a limit; the bounds that do limit the reserve are `minMs`, `maxMs`, `maxShare`.
 */
import { nearestRank } from "../util/nearest-rank.js";

/** Samples in the window below which the prior reserve applies. */
const MIN_SAMPLES = 20;
/** Window of the overhead samples, ms; a burst of event-loop stalls leaves the reserve within it. */
const WINDOW_MS = 10_000;
/** Samples kept at most (the newest), so the p99 costs a bounded sort. */
const CAPACITY = 512;
/** The p99 is recomputed at most this often, ms. */
const REFRESH_MS = 100;

export interface ReplyReserveOptions {
  /** Kept on top of the measured overhead for the transit the node cannot see, ms. */
  readonly transitMs: number;
  readonly minMs: number;
  readonly maxMs: number;
  /** The reserve never takes more than this share, in [0, 1], of a call's time left on arrival. */
  readonly maxShare: number;
  /** Called when the reserve wanted is above its cap and is capped (the reply may then miss), by which bound. */
  readonly onCapped?: (
    wantedMs: number,
    capMs: number,
    parts: { transitMs: number; overheadMs: number; loopMs: number },
    bound: "maxMs" | "maxShare",
  ) => void;
  /**
   * How late the event loop runs a callback that becomes ready now, ms (a request's header read meets
   * it); absent: 0. A negative or non-finite value counts as 0.
   */
  readonly loopLateMs?: () => number;
}

/**
 * The reserve for one call: `ms` kept, `wantedMs` before the cap (more than `ms` when capped) — the
 * sum of its parts: `transitMs` (configured), `overheadMs` (the window's decide-and-reply p99, or its
 * largest for kind `prior`) and `loopMs` (the loop's recent lateness).
 */
export interface Reserve {
  readonly ms: number;
  readonly wantedMs: number;
  readonly kind: "measured" | "prior";
  readonly transitMs: number;
  readonly overheadMs: number;
  readonly loopMs: number;
}

export class ReplyReserve {
  readonly #o: ReplyReserveOptions;
  readonly #at = new Float64Array(CAPACITY);
  readonly #ms = new Float64Array(CAPACITY);
  #next = 0;
  #count = 0;
  #cached = NaN;
  #cachedAt = -Infinity;
  #measured = false;

  constructor(options: ReplyReserveOptions) {
    this.#o = options;
  }

  /** Records one decide-and-reply overhead, ms (negative or non-finite values are ignored). */
  record(overheadMs: number, now: number): void {
    if (!(overheadMs >= 0) || !Number.isFinite(overheadMs)) return;
    this.#at[this.#next] = now;
    this.#ms[this.#next] = overheadMs;
    this.#next = (this.#next + 1) % CAPACITY;
    if (this.#count < CAPACITY) this.#count++;
    // an overhead above the reserve in use is news now, not at the next refresh
    if (!(overheadMs <= this.#cached)) this.#cachedAt = -Infinity;
  }

  /**
   * The reserve to keep now for a call with `leftMs` to its deadline; kind `measured` (a window p99) or
   * `prior` (too few samples: the largest). At least `minMs`, even above the share; at most `maxMs`
   * unless the caller gives another bound (a node whose admission is saturated, shedding or every slot
   * taken, lifts it: src/mesh/coordinate-service.ts).
   */
  current(now: number, leftMs = Infinity, maxMs = this.#o.maxMs): Reserve {
    if (now - this.#cachedAt >= REFRESH_MS || now < this.#cachedAt) {
      this.#cached = this.#p99(now);
      this.#cachedAt = now;
    }
    const o = this.#o;
    const overheadMs = Number.isNaN(this.#cached) ? 0 : this.#cached;
    const loop = o.loopLateMs?.() ?? 0;
    const loopMs = loop > 0 && Number.isFinite(loop) ? loop : 0;
    const wantedMs = o.transitMs + overheadMs + loopMs;
    const capMs = Math.min(maxMs, o.maxShare * Math.max(0, leftMs));
    if (wantedMs > capMs) {
      const bound = capMs < maxMs ? "maxShare" : "maxMs";
      o.onCapped?.(wantedMs, capMs, { transitMs: o.transitMs, overheadMs, loopMs }, bound);
    }
    return {
      ms: Math.max(o.minMs, Math.min(capMs, wantedMs)),
      wantedMs,
      kind: this.#measured ? "measured" : "prior",
      transitMs: o.transitMs,
      overheadMs,
      loopMs,
    };
  }

  /** The window's p99 (`#measured`), or with too few samples its largest (NaN: none). */
  #p99(now: number): number {
    const recent: number[] = [];
    for (let i = 0; i < this.#count; i++) {
      if (now - this.#at[i]! <= WINDOW_MS) recent.push(this.#ms[i]!);
    }
    recent.sort((a, b) => a - b);
    this.#measured = recent.length >= MIN_SAMPLES;
    return (this.#measured ? nearestRank(recent, 0.99) : recent[recent.length - 1]) ?? NaN;
  }
}
