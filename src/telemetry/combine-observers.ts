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
  // Plain loops, no closure per call: these run on every fan-out and branch.
  combined.onDecision = (id: string, c: Classification, e: FanoutEstimate) => {
    for (const o of list) {
      try {
        o.onDecision?.(id, c, e);
      } catch (err) {
        fail(o, err);
      }
    }
  };
  combined.onBranchEnd = (id: string, r: BranchRecord) => {
    for (const o of list) {
      try {
        o.onBranchEnd?.(id, r);
      } catch (err) {
        fail(o, err);
      }
    }
  };
  combined.onFanoutEnd = (out: FanoutOutcome) => {
    for (const o of list) {
      try {
        o.onFanoutEnd?.(out);
      } catch (err) {
        fail(o, err);
      }
    }
  };
  combined.onViolation = (id: string, v: Error) => {
    for (const o of list) {
      try {
        o.onViolation?.(id, v);
      } catch (err) {
        fail(o, err);
      }
    }
  };
  combined.onError = (err: unknown) => {
    for (const o of list) fail(o, err);
  };
  return combined;
}
