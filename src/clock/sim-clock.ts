/**
 * A discrete-event clock: time moves only when the test or the simulator says so. Timers live in a
 * binary heap ordered by (time, insertion), so runs are deterministic. Between two timer firings the
 * clock lets the microtask queue drain (one `setImmediate` turn), so async code that awaits promises
 * between timers — the engine, the in-memory transport — behaves as it would on real time.
 *
 * @example
 * const clock = new SimClock();
 * const done = sleep(clock, 50).then(() => clock.now());
 * await clock.advance(100); // fires the timer at t=50, then stops at t=100
 * await done; // 50
 *
 * // or drive the clock until a promise settles:
 * const value = await clock.runUntilSettled(coordinator.fanOut(task, options));
 */
import { TailswarmError, invalid } from "../errors.js";
import type { Clock, TimerHandle } from "./clock.js";

interface Timer {
  readonly at: number;
  readonly seq: number;
  readonly fn: () => void;
  cancelled: boolean;
}

export interface SimClockOptions {
  /** Time at creation, ms. Default 0. */
  start?: number;
  /** Upper bound on timers fired by one `runUntilIdle`/`runUntilSettled` call (guards runaway loops). Default 1_000_000. */
  maxTimersPerRun?: number;
}

const yieldToEventLoop = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

export class SimClock implements Clock {
  private current: number;
  private seq = 0;
  private live = 0;
  private readonly heap: Timer[] = [];
  private readonly maxTimersPerRun: number;

  constructor(options: SimClockOptions = {}) {
    this.current = options.start ?? 0;
    this.maxTimersPerRun = options.maxTimersPerRun ?? 1_000_000;
  }

  now(): number {
    return this.current;
  }

  /** Timers scheduled and not yet fired or cancelled. */
  get pending(): number {
    return this.live;
  }

  /** Time of the next live timer, or undefined when idle. */
  nextTimerAt(): number | undefined {
    this.dropCancelledTop();
    return this.heap[0]?.at;
  }

  setTimer(fn: () => void, delayMs: number): TimerHandle {
    const delay = Number.isFinite(delayMs) ? Math.max(0, delayMs) : delayMs > 0 ? Infinity : 0;
    const timer: Timer = { at: this.current + delay, seq: this.seq++, fn, cancelled: false };
    if (timer.at !== Infinity) {
      this.push(timer);
      this.live++;
    }
    return {
      cancel: () => {
        if (!timer.cancelled) {
          timer.cancelled = true;
          if (timer.at !== Infinity) this.live--;
        }
      },
    };
  }

  /** Let pending microtasks (promise continuations) run without moving time. */
  async flush(): Promise<void> {
    await yieldToEventLoop();
  }

  /** Move time forward by `ms`, firing every timer due on the way, in order. */
  async advance(ms: number): Promise<void> {
    if (!(ms >= 0)) {
      throw invalid("SimClock.advance ms", ms, "a number >= 0");
    }
    await this.runUntil(this.current + ms);
  }

  /** Fire every timer due at or before `t`, then set the time to `t` (never backwards). */
  async runUntil(t: number): Promise<void> {
    await this.flush();
    let next = this.nextTimerAt();
    while (next !== undefined && next <= t) {
      this.fireNext();
      await this.flush();
      next = this.nextTimerAt();
    }
    if (t > this.current) this.current = t;
  }

  /** Fire timers until none is left. Throws when more than `maxTimersPerRun` fire (a periodic timer never ends). */
  async runUntilIdle(): Promise<void> {
    await this.flush();
    let fired = 0;
    while (this.nextTimerAt() !== undefined) {
      await this.fireCounted(++fired, "runUntilIdle");
    }
  }

  /**
   * Fire timers until `promise` settles, and return (or throw) its result. Throws INTERNAL when no timer
   * is left and the promise is still pending: nothing could ever settle it (a hang on real time).
   */
  async runUntilSettled<T>(promise: Promise<T>): Promise<T> {
    let settled = false;
    const observed = promise.then(
      (value) => {
        settled = true;
        return value;
      },
      (error: unknown) => {
        settled = true;
        throw error;
      },
    );
    observed.catch(() => undefined);
    await this.flush();
    let fired = 0;
    while (!settled) {
      if (this.nextTimerAt() === undefined) {
        throw new TailswarmError(
          "INTERNAL",
          `SimClock.runUntilSettled: promise still pending at t=${this.current} with no timer left`,
        );
      }
      await this.fireCounted(++fired, "runUntilSettled");
    }
    return observed;
  }

  /** Fires the next timer as the `fired`-th of `caller`'s run, past `maxTimersPerRun` throws instead. */
  private async fireCounted(fired: number, caller: string): Promise<void> {
    if (fired > this.maxTimersPerRun) {
      throw new TailswarmError(
        "INTERNAL",
        `SimClock.${caller}: more than maxTimersPerRun=${this.maxTimersPerRun} timers fired`,
      );
    }
    this.fireNext();
    await this.flush();
  }

  private fireNext(): void {
    const timer = this.pop();
    if (timer === undefined) return;
    this.live--;
    timer.cancelled = true;
    if (timer.at > this.current) this.current = timer.at;
    timer.fn();
  }

  private dropCancelledTop(): void {
    while (this.heap.length > 0 && this.heap[0]!.cancelled) this.pop();
  }

  private static before(a: Timer, b: Timer): boolean {
    return a.at < b.at || (a.at === b.at && a.seq < b.seq);
  }

  private push(timer: Timer): void {
    const heap = this.heap;
    heap.push(timer);
    let i = heap.length - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!SimClock.before(heap[i]!, heap[parent]!)) break;
      [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
      i = parent;
    }
  }

  private pop(): Timer | undefined {
    const heap = this.heap;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined || heap.length === 0) return top;
    heap[0] = last;
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && SimClock.before(heap[l]!, heap[m]!)) m = l;
      if (r < heap.length && SimClock.before(heap[r]!, heap[m]!)) m = r;
      if (m === i) break;
      [heap[i], heap[m]] = [heap[m]!, heap[i]!];
      i = m;
    }
    return top;
  }
}
