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
 * @example
 * const loop = new EventLoopDelay();
 * loop.read(); // { p50Ms: 10.1, p99Ms: 12.3, maxMs: 41.0, windowMs: 7_400 }
 * loop.close();
 */
import { monitorEventLoopDelay } from "node:perf_hooks";
import type { ELDHistogram } from "node:perf_hooks";

export interface EventLoopDelayReading {
  /** NaN until a first slice has data. Includes the timer's own resolution (≈ `resolutionMs`). */
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** How much time the reading covers, ms. */
  readonly windowMs: number;
}

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

  constructor(
    readonly resolutionMs = 10,
    readonly sliceMs = 5_000,
  ) {
    this.#h = monitorEventLoopDelay({ resolution: resolutionMs });
    this.#h.enable();
    this.#timer = setInterval(() => this.#rotate(), sliceMs);
    this.#timer.unref();
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
   * How late a callback that becomes ready now may run, ms: the reading's p99 less the monitor timer's
   * own resolution, which the histogram includes (0 before a first slice has data). A Coordinate's
   * reply reserve keeps it for the lateness its header read met (src/mesh/reply-reserve.ts).
   */
  lateMs(): number {
    const p99 = this.read().p99Ms;
    return Number.isNaN(p99) ? 0 : Math.max(0, p99 - this.resolutionMs);
  }

  close(): void {
    clearInterval(this.#timer);
    this.#h.disable();
  }

  #current(): Slice {
    const h = this.#h;
    const ms = Date.now() - this.#sliceStart;
    if (h.count === 0) return { p50Ms: NaN, p99Ms: NaN, maxMs: NaN, ms };
    return { p50Ms: h.percentile(50) / 1e6, p99Ms: h.percentile(99) / 1e6, maxMs: h.max / 1e6, ms };
  }

  #rotate(): void {
    const slice = this.#current();
    if (!Number.isNaN(slice.p50Ms)) this.#previous = slice;
    this.#h.reset();
    this.#sliceStart = Date.now();
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
