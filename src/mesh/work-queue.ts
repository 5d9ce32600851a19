/**
 * Concurrency limit with a FIFO queue: at most `capacity` branches run at once, the rest wait in
 * arrival order (so `queue_ms` and `service_ms` reported to coordinators are real). A waiter whose
 * signal aborts leaves the queue at once.
 */
import { TailswarmError } from "../errors.js";
import { checkRange, intRange } from "../util/range.js";

interface Waiter {
  resolve(): void;
  reject(reason: unknown): void;
  signal: AbortSignal;
  onAbort: () => void;
  done: boolean;
}

export class WorkQueue {
  readonly capacity: number;
  readonly maxQueue: number;
  #running = 0;
  #depth = 0;
  #waiters: (Waiter | undefined)[] = [];
  #head = 0;

  constructor(capacity: number, maxQueue: number) {
    this.capacity = checkRange("concurrency", capacity, intRange(1));
    this.maxQueue = checkRange("maxQueue", maxQueue, intRange(0));
  }

  get inFlight(): number {
    return this.#running;
  }

  get queueDepth(): number {
    return this.#depth;
  }

  /**
   * Takes a slot: `true` when one was free (no await needed), otherwise a promise that resolves when
   * the slot is handed over, or rejects with the signal's reason. Throws `RESOURCE_EXHAUSTED` when
   * the queue is full. Every acquired slot must be given back with `release()`.
   */
  acquire(signal: AbortSignal): true | Promise<void> {
    if (this.#running < this.capacity && this.#depth === 0) {
      this.#running++;
      return true;
    }
    if (this.#depth >= this.maxQueue) {
      throw new TailswarmError(
        "RESOURCE_EXHAUSTED",
        `queue: ${this.#depth} branches waiting and ${this.#running} running, limit is ${this.maxQueue} waiting`,
      );
    }
    if (signal.aborted) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        signal,
        done: false,
        onAbort: () => {
          if (waiter.done) return;
          waiter.done = true;
          this.#depth--;
          reject(signal.reason);
        },
      };
      signal.addEventListener("abort", waiter.onAbort, { once: true });
      this.#waiters.push(waiter);
      this.#depth++;
    });
  }

  /** Gives a slot back; the oldest live waiter gets it. */
  release(): void {
    while (this.#head < this.#waiters.length) {
      const w = this.#waiters[this.#head];
      this.#waiters[this.#head++] = undefined;
      if (w === undefined || w.done) continue;
      w.done = true;
      this.#depth--;
      w.signal.removeEventListener("abort", w.onAbort);
      this.#compact();
      w.resolve();
      return;
    }
    this.#compact();
    this.#running--;
  }

  #compact(): void {
    if (this.#head > 1024 && this.#head * 2 > this.#waiters.length) {
      this.#waiters = this.#waiters.slice(this.#head);
      this.#head = 0;
    } else if (this.#head === this.#waiters.length) {
      this.#waiters.length = 0;
      this.#head = 0;
    }
  }
}
