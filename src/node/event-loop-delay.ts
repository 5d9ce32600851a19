/**
 * How late this process's event loop runs its callbacks, over a recent window: a coordinator whose
 * loop stalls answers late whatever its estimates say (a Coordinate with a 90 ms deadline misses it
 * when the loop is 90 ms behind), so operators and the testbed need to see it beside the decisions.
 *
 * Node's `monitorEventLoopDelay` (a timer every `resolutionMs`, its lateness into a histogram) is read
 * in slices of `sliceMs`: `read()` reports the current slice and the previous one — the last
 * `sliceMs`–2·`sliceMs` — as p50 and p99 (the larger of the two slices', so a stall in either shows)
 * and the max.
 *
 * `lateMs()` also sees a single stall, which a p99 of 500–1,000 ticks over the window ignores: its own
 * timer ticks every `resolutionMs` (unref'd) and keeps when it ran and how late. libuv runs timers before
 * the poll phase that reads a request, so a tick that ran within the last `resolutionMs` ran after the
 * stall this read met, and its lateness is that stall's; a tick overdue now (the stall was in this turn's
 * timers or poll phase) is late by at least its overdue time, and that stands in.
 *
 * @example
 * const loop = new EventLoopDelay();
 * loop.read(); // { p50Ms: 10.1, p99Ms: 12.3, maxMs: 41.0, windowMs: 7_400 }
 * loop.close();
 */
import { monitorEventLoopDelay, performance } from "node:perf_hooks";
import type { ELDHistogram } from "node:perf_hooks";

export interface EventLoopDelayReading {
  /** NaN until a first slice has data. Includes the timer's own resolution (≈ `resolutionMs`). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** How much time the reading covers, ms. */
  readonly windowMs: number;
}

/** The p99 part of `lateMs()` is re-read at most this often, ms (a native percentile read). */
const P99_REFRESH_MS = 100;

interface Slice {
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  readonly ms: number;
}

export class EventLoopDelay {
  readonly #h: ELDHistogram;
  readonly #timer: NodeJS.Timeout;
  #previous: Slice | undefined;
  #sliceStart = Date.now();
  readonly #tick: NodeJS.Timeout;
  /** When the newest tick ran (performance.now()) and how late, ms. */
  #tickAt: number;
  #tickLateMs = 0;
  #p99LateMs = 0;
  #p99At = -Infinity;

  constructor(
    readonly resolutionMs = 10,
    readonly sliceMs = 5_000,
  ) {
    this.#h = monitorEventLoopDelay({ resolution: resolutionMs });
    this.#h.enable();
    this.#timer = setInterval(() => this.#rotate(), sliceMs);
    this.#timer.unref();
    this.#tickAt = performance.now();
    this.#tick = setInterval(() => this.#onTick(), resolutionMs);
    this.#tick.unref();
  }

  read(): EventLoopDelayReading {
    const current = this.#current();
    const previous = this.#previous;
    if (previous === undefined || previous.ms === 0) return { ...current, windowMs: current.ms };
    if (current.ms === 0 || Number.isNaN(current.p50Ms)) return { ...previous, windowMs: previous.ms };
    return {
      p50Ms: Math.max(previous.p50Ms, current.p50Ms),
      p99Ms: Math.max(previous.p99Ms, current.p99Ms),
      maxMs: Math.max(previous.maxMs, current.maxMs),
      windowMs: previous.ms + current.ms,
    };
  }

  /**
   * How late a callback that becomes ready now may run, ms: the larger of the window's p99 less the
   * monitor timer's own resolution, which the histogram includes (re-read every 100 ms; 0 before a first
   * slice has data), and this turn's stall: the newest tick's lateness if it ran within the last
   * `resolutionMs`, else how overdue the next tick is. A Coordinate's reply reserve keeps it for the lateness
   * its header read met (src/mesh/reply-reserve.ts).
   */
  lateMs(): number {
    const now = performance.now();
    if (now - this.#p99At >= P99_REFRESH_MS || now < this.#p99At) {
      this.#p99LateMs = this.#p99Part();
      this.#p99At = now;
    }
    const since = now - this.#tickAt;
    const turn = since <= this.resolutionMs ? this.#tickLateMs : since - this.resolutionMs;
    return Math.max(this.#p99LateMs, turn);
  }

  /**
   * How long a request read now may have waited unread in this process, ms: the newest tick's lateness
   * (the stall before this turn, during which it may have arrived) plus how far this turn has run past
   * the next tick's time. A request whose headers are read after a stall starts its gRPC deadline that
   * much late; the header gate takes it off the call's timeout (src/mesh/header-admission.ts).
   */
  readStallMs(): number {
    return this.#tickLateMs + Math.max(0, performance.now() - this.#tickAt - this.resolutionMs);
  }

  close(): void {
    clearInterval(this.#timer);
    clearInterval(this.#tick);
    this.#h.disable();
  }

  #current(): Slice {
    const h = this.#h;
    const ms = Date.now() - this.#sliceStart;
    if (h.count === 0) return { p50Ms: NaN, p99Ms: NaN, maxMs: NaN, ms };
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, ms };
  }

  #onTick(): void {
    const now = performance.now();
    this.#tickLateMs = Math.max(0, now - this.#tickAt - this.resolutionMs);
    this.#tickAt = now;
  }

  /** `read()`'s p99 less the resolution, without its objects: one native percentile read. */
  #p99Part(): number {
    const h = this.#h;
    const current = h.count === 0 ? NaN : h.percentile(99) / 1e6;
    const previous = this.#previous?.p99Ms ?? NaN;
    const p99 = Number.isNaN(current)
      ? previous
      : Number.isNaN(previous)
        ? current
        : Math.max(current, previous);
    return Number.isNaN(p99) ? 0 : Math.max(0, p99 - this.resolutionMs);
  }

  #rotate(): void {
    const slice = this.#current();
    if (!Number.isNaN(slice.p50Ms)) this.#previous = slice;
    this.#h.reset();
    this.#sliceStart = Date.now();
    this.#p99At = -Infinity;
  }
}

let shared: EventLoopDelay | undefined;
let users = 0;

/**
 * The process's monitor, shared by every node it hosts (`tailswarm host` runs several on one loop);
 * call the returned release when the node stops (the last release closes it).
 */
export function acquireEventLoopDelay(): { readonly monitor: EventLoopDelay; release(): void } {
  shared ??= new EventLoopDelay();
  users++;
  const monitor = shared;
  let released = false;
  return {
    monitor,
    release() {
      if (released) return;
      released = true;
      if (--users === 0 && shared === monitor) {
        monitor.close();
        shared = undefined;
      }
    },
  };
}
