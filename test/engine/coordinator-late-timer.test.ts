/** The fan-out's deadline on a busy event loop: the timer fires late, the branches' ends still end the wait. */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock/clock.js";
import { collectModel, harness } from "./harness.js";

const task = { kind: "echo", payload: null };

describe("Coordinator.fanOut — a deadline timer that fires late", () => {
  it("ends a synchronous wait at the first branch end past the deadline, not at the late timer", async () => {
    const h = harness();
    // every timer of 150 ms or more fires 100 ms late (the transport keeps the true clock)
    const late: Clock = {
      now: () => h.clock.now(),
      setTimer: (fn, delayMs) => h.clock.setTimer(fn, delayMs >= 150 ? delayMs + 100 : delayMs),
    };
    const { coordinator } = harness({ transport: h.transport, coordinator: { clock: late } });
    h.transport.addPeer("a", { latency: 30, handler: () => "a" });
    h.transport.addPeer("b", { latency: 230, handler: () => "b" });
    h.transport.addPeer("c", { latency: 1_000, handler: () => "c" });
    const outcome = await h.clock.runUntilSettled(
      coordinator.fanOut(task, {
        peers: ["a", "b", "c"],
        budgetMs: 200,
        model: collectModel(),
        policy: "always-sync",
      }),
    );
    expect(outcome.classification.mode).toBe("synchronous");
    // b's end at 230 ms is the first moment the wait saw the deadline passed; the timer would say 300
    expect(outcome.elapsedMs).toBe(230);
    expect(outcome.deadlineMissed).toBe(true);
    expect(outcome.answered).toBe(2);
  });
});
