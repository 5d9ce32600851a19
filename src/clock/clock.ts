/**
 * Time as the engine sees it. All times are milliseconds (fractions allowed). `now()` is an epoch-like
 * timestamp so that absolute deadlines mean the same thing across processes (gRPC carries deadlines as
 * wall-clock epoch ms). The system clock is real time; `SimClock` (src/clock/sim-clock.ts) is a
 * discrete-event clock for tests and the simulated testbed.
 */
export interface TimerHandle {
  cancel(): void;
}

export interface Clock {
  /** Current time in ms. */
  now(): number;
  /** Run `fn` once after `delayMs` (clamped at 0). */
  setTimer(fn: () => void, delayMs: number): TimerHandle;
}

/** Resolves after `delayMs`, or rejects with the signal's reason when `signal` aborts first. */
export function sleep(clock: Clock, delayMs: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(signal?.reason);
    };
    const timer = clock.setTimer(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, delayMs);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

const origin = performance.timeOrigin;

/** Node's timers hold at most 2³¹ − 1 ms (~24.8 days); a longer delay would fire at once, with a warning. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Real time: epoch ms with sub-millisecond resolution (performance.timeOrigin + performance.now()).
 * A timer's delay is clamped to [0, MAX_TIMER_MS]: a later one fires late rather than at once.
 */
export const systemClock: Clock = {
  now: () => origin + performance.now(),
  setTimer(fn, delayMs) {
    const t = setTimeout(fn, Math.min(MAX_TIMER_MS, Math.max(0, delayMs)));
    return { cancel: () => clearTimeout(t) };
  },
};
