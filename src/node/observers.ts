/**
 * One FanoutObserver that forwards to a list, read at call time (so observers added after the
 * Coordinator was built — telemetry — still see every later fan-out). Each call is isolated: one
 * observer throwing does not stop the others; the error goes to the others' `onError`.
 */
import type { FanoutObserver } from "../engine/outcome.js";

export function combineObservers(list: readonly FanoutObserver[]): FanoutObserver {
  const each = (fn: (o: FanoutObserver) => void): void => {
    for (const o of list) {
      try {
        fn(o);
      } catch (error) {
        for (const other of list) {
          if (other === o) continue;
          try {
            other.onError?.(error);
          } catch {
            // an observer's onError must not throw; nothing more to do
          }
        }
      }
    }
  };
  return {
    onDecision: (id, c, e) => each((o) => o.onDecision?.(id, c, e)),
    onBranchEnd: (id, r) => each((o) => o.onBranchEnd?.(id, r)),
    onFanoutEnd: (out) => each((o) => o.onFanoutEnd?.(out)),
    onViolation: (id, v) => each((o) => o.onViolation?.(id, v)),
    onError: (err) => each((o) => o.onError?.(err)),
  };
}
