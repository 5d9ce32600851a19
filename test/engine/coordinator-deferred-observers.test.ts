import { describe, expect, it } from "vitest";
import type { FanoutObserver } from "../../src/engine/outcome.js";
import { collectModel, harness } from "./harness.js";

const task = { kind: "echo", payload: null };
const turn = (): Promise<void> => new Promise((r) => setImmediate(() => setImmediate(r)));

/** Every notification in the order the observer got it, with what it carried. */
function orderedObserver(): { observer: FanoutObserver; log: unknown[] } {
  const log: unknown[] = [];
  return {
    log,
    observer: {
      onDecision: (_id, c) => log.push(["decision", c.mode, c.reason]),
      onBranchEnd: (_id, r) => log.push(["branch", r.peer, r.outcome, r.latencyMs, r.lostWorkMs]),
      onFanoutEnd: (o) => log.push(["end", o.classification.mode, o.answered, o.elapsedMs, o.action]),
      onViolation: (_id, v) => log.push(["violation", v.message]),
    },
  };
}

/** A synchronous fan-out whose slow branch settles after the deadline, then a degrade. */
async function scenario(deferObservers: boolean): Promise<{ log: unknown[]; toldBeforeReturn: number[] }> {
  const { observer, log } = orderedObserver();
  const h = harness({ coordinator: { observer, deferObservers } });
  h.transport.addPeer("a", { latency: 10, handler: () => "a" });
  h.transport.addPeer("b", { latency: 300, handler: () => "b" });
  h.warm("a", [10, 10, 10, 150], 40);
  h.warm("b", [10, 10, 10, 150], 40);
  const toldBeforeReturn: number[] = [];
  const options = { peers: ["a", "b"], model: collectModel(), fallback: () => "local" };
  const sync = await h.clock.runUntilSettled(
    h.coordinator.fanOut(task, { ...options, budgetMs: 100, policy: "always-sync" }),
  );
  toldBeforeReturn.push(log.length);
  expect(sync.classification.mode).toBe("synchronous");
  await turn();
  await h.clock.advance(500); // b settles late, after the fan-out closed
  await turn();
  const before = log.length;
  const degrade = await h.coordinator.fanOut(task, { ...options, budgetMs: 5 }); // issues nothing
  toldBeforeReturn.push(log.length - before);
  expect(degrade.classification.mode).toBe("degrade");
  await turn();
  return { log, toldBeforeReturn };
}

describe("Coordinator deferObservers", () => {
  it("tells the observer after fanOut resolves, in the same order with the same records", async () => {
    const now = await scenario(false);
    const later = await scenario(true);
    // synchronously: the decision, a's report and the end; deferred: only the decision of a fan-out
    // that issues branches (their spans hang under it), nothing of a degrade
    expect(now.toldBeforeReturn).toEqual([3, 2]);
    expect(later.toldBeforeReturn).toEqual([1, 0]);
    expect(later.log).toEqual(now.log);
    expect(later.log.map((e) => (e as unknown[])[0])).toEqual([
      "decision",
      "branch",
      "end",
      "branch", // b's settled report, after the fan-out closed
      "decision",
      "end",
    ]);
  });
});
