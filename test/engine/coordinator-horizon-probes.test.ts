/**
 * Which cut branches become horizon probes, through a real Coordinator on a simulated clock: a peer cut
 * alone is owed its probes; a fan-out cut almost whole (a stall) owes none, so the budget is left for
 * the peers that are slow on their own.
 */
import { describe, expect, it } from "vitest";
import { collectModel, harness } from "./harness.js";
import type { Harness } from "./harness.js";

const task = { kind: "collect", payload: null };

function swarm(slow: readonly string[], fast: readonly string[]): Harness {
  // share ~0: only owed probes; the initial credit of one is spent by the first refused owed one
  const h = harness({
    coordinator: { explorationRate: 0, horizonProbe: { share: 1e-9, minPerPeerPerWindow: 2 } },
  });
  for (const p of slow) h.transport.addPeer(p, { latency: 300, handler: () => p });
  for (const p of fast) h.transport.addPeer(p, { latency: 5, handler: () => p });
  return h;
}

async function fanOut(h: Harness, peers: readonly string[]): Promise<void> {
  await h.clock.runUntilSettled(
    h.coordinator.fanOut(task, {
      peers: [...peers],
      budgetMs: 50,
      model: collectModel(),
      policy: "always-sync",
    }),
  );
}

describe("Coordinator — horizon probes from cut branches", () => {
  it("a peer cut while the rest of its fan-out answered is owed a probe", async () => {
    const h = swarm(["gw"], ["a", "b", "c"]);
    await fanOut(h, ["gw", "a", "b", "c"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 1, completed: 1 });
    // its late answer is a sample beyond the budget
    expect(h.book.estimate("gw", h.clock.now()).samples).toBe(1);
  });

  it("a fan-out cut almost whole owes nothing: only the initial credit probes", async () => {
    const h = swarm(["s1", "s2", "s3", "s4"], ["a"]);
    await fanOut(h, ["s1", "s2", "s3", "s4", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 1 });
    // without the rule each of the four would have been owed one; a peer later cut alone still is
    await fanOut(h, ["s2", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 2, completed: 2 });
  });
});
