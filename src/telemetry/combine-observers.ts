/** Several `FanoutObserver`s behind one, each isolated from the others' errors. */
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "../engine/outcome.js";
import type { FanoutEstimate } from "../estimate/types.js";
import type { Classification } from "../policy/types.js";

/**
 * Calls each observer's hooks in order. A hook that throws does not stop the others: the error goes
 * to that observer's `onError`, then to the combined observer's `onError` (set by the engine, if any).
 *
 * @example
 * const observer = combineObservers(recorder, tracer, metrics);
 */
export function combineObservers(...observers: readonly (FanoutObserver | undefined)[]): FanoutObserver {
  const list = observers.filter((o): o is FanoutObserver => o !== undefined);
  const combined: FanoutObserver = {};
  const fail = (o: FanoutObserver, err: unknown): void => {
    try {
      o.onError?.(err);
    } catch {
      // an observer's error handler must not throw either; nothing left to tell
    }
  };
  const each = (call: (o: FanoutObserver) => void): void => {
    for (const o of list) {
      try {
        call(o);
      } catch (err) {
        fail(o, err);
      }
    }
  };
  combined.onViolation = (id: string, v: Error) => each((o) => o.onViolation?.(id, v));
  combined.onDecision = (id: string, c: Classification, e: FanoutEstimate) =>
    each((o) => o.onDecision?.(id, c, e));
  combined.onBranchEnd = (id: string, r: BranchRecord) => each((o) => o.onBranchEnd?.(id, r));
  combined.onFanoutEnd = (out: FanoutOutcome) => each((o) => o.onFanoutEnd?.(out));
  combined.onError = (err: unknown) => each((o) => o.onError?.(err));
  return combined;
}
