/**
 * Ends, as failed, the branches a misbehaving transport never settles, `settleTimeoutMs` after the
 * fan-out's deadline — so the latency book and the abandon ledger close. One owner for every fan-out
 * engine (the Coordinator's and the replicated HedgedFanout).
 */
import type { Clock } from "../clock/clock.js";
import type { BranchSet } from "./branch-set.js";

export function watchUnsettled<Answer>(
  set: BranchSet<Answer>,
  clock: Clock,
  deadline: number,
  settleTimeoutMs: number,
): void {
  if (set.unsettled === 0) return;
  const timer = clock.setTimer(
    () => {
      for (const b of set.branches) {
        if (b.result !== undefined) continue;
        set.forceSettle(b, {
          kind: "failed",
          code: "TRANSPORT_NO_SETTLE",
          message: `transport did not settle branch ${b.branchId} within ${settleTimeoutMs} ms of its deadline`,
        });
      }
    },
    deadline + settleTimeoutMs - clock.now(),
  );
  void set.settled().then(() => timer.cancel());
}
