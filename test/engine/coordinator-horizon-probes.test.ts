/**
 * Which cut branches become horizon probes, through a real Coordinator on a simulated clock: a peer cut
 * is owed its probes, every peer of a fan-out cut on time too, but a cut starts only the probes that place
 * its observation past the cut (one for all of n), at most maxPerFanout; a fan-out cut almost whole while the
 * coordinator noticed its deadline late (a stall) owes none, so the budget is left for the peers that are
 * slow on their own. A probe's slot is freed however the fan-out ends.
 */
import { describe, expect, it } from "vitest";
import type { Clock } from "../../src/clock/clock.js";
import type { SimClock } from "../../src/clock/sim-clock.js";
import { observedSetKey } from "../../src/estimate/observed-fanouts.js";
import { collectModel, harness } from "./harness.js";
import type { Harness } from "./harness.js";

const task = { kind: "collect", payload: null };

/** The harness's simulated clock, its timers fired `lateMs` late: a coordinator whose event loop is held. */
function laggingClock(): { clock: Clock; bind(sim: SimClock): void; lateMs: number } {
  let sim: SimClock | undefined;
  const lag = {
    lateMs: 0,
    bind: (s: SimClock) => void (sim = s),
    clock: {
      now: () => (sim as SimClock).now(),
      setTimer: (fn: () => void, delayMs: number) => (sim as SimClock).setTimer(fn, delayMs + lag.lateMs),
    },
  };
  return lag;
}

function swarm(slow: readonly string[], fast: readonly string[], clock?: Clock, maxPerFanout = 10): Harness {
  // share ~0: only owed probes; the initial credit of one is spent by the first refused owed one
  const h = harness({
    coordinator: {
      explorationRate: 0,
      horizonProbe: { share: 1e-9, minPerPeerPerWindow: 2, maxPerFanout },
      ...(clock !== undefined && { clock }),
    },
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

  it("an all-of-n cut starts one probe, the peer probed least this window: the window's owed probes reach later cuts", async () => {
    const h = swarm(["s1", "s2", "s3", "s4"], ["a"], undefined, 3);
    const samples = (): number[] =>
      ["s1", "s2", "s3", "s4"].map((p) => h.book.estimate(p, h.clock.now()).samples);
    await fanOut(h, ["s1", "s2", "s3", "s4", "a"]);
    await h.clock.runUntilIdle();
    // one late answer places the fan-out past its cut: the others owed are left, not refused by the cap
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 1, completed: 1, capped: 0 });
    expect(samples()).toEqual([1, 0, 0, 0]);
    for (let i = 0; i < 3; i++) {
      await fanOut(h, ["s1", "s2", "s3", "s4", "a"]);
      await h.clock.runUntilIdle();
    }
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 4, completed: 4, capped: 0 });
    expect(samples()).toEqual([1, 1, 1, 1]);
  });

  it("fan-outs cut side by side each start a probe, to different peers, and each is observed past its cut", async () => {
    const slow = ["s1", "s2", "s3", "s4", "s5", "s6"];
    const h = swarm(slow, ["a"], undefined, 3);
    const peers = [...slow, "a"];
    const run = (): Promise<unknown> =>
      h.coordinator.fanOut(task, { peers, budgetMs: 50, model: collectModel(), policy: "always-sync" });
    await h.clock.runUntilSettled(Promise.all([run(), run(), run()]));
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 3, completed: 3 });
    expect(slow.map((p) => h.book.estimate(p, h.clock.now()).samples)).toEqual([1, 1, 1, 0, 0, 0]);
    // three probes a cut would leave the third fan-out's peers busy: censored at its cut, ~50 ms
    const set = h.book["observed"].get(observedSetKey(peers, { kind: "all" }));
    const cdf = set?.cdf(h.clock.now());
    expect(cdf?.quantile(0.01)).toBeGreaterThanOrEqual(290);
  });

  it("a quorum's cut starts as many probes as can pass it: cut − still needed + 1, at most maxPerFanout", async () => {
    const h = swarm(["s1", "s2", "s3", "s4"], ["a"], undefined, 3);
    await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, {
        peers: ["s1", "s2", "s3", "s4", "a"],
        required: { kind: "quorum", k: 3 },
        budgetMs: 50,
        model: collectModel(),
        policy: "always-sync",
      }),
    );
    await h.clock.runUntilIdle();
    // 4 cut, 2 still needed: the 2nd smallest of the cut bounds passes the cut once 3 of them run on
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 3, completed: 3, capped: 0 });
  });

  it("a fan-out cut almost whole with its deadline noticed late (a stall) owes nothing: only the initial credit probes", async () => {
    const lag = laggingClock();
    const h = swarm(["s1", "s2", "s3", "s4"], ["a"], lag.clock);
    lag.bind(h.clock);
    lag.lateMs = 30; // the deadline timer fires 30 ms late, beyond a tenth of the 50 ms budget
    await fanOut(h, ["s1", "s2", "s3", "s4", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 1 });
    // a peer later cut alone, on time, still is owed one
    lag.lateMs = 0;
    await fanOut(h, ["s2", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 2, completed: 2 });
  });

  it("frees a peer's probe slot when its probe ends, and when the model throws after the cut", async () => {
    const h = swarm(["gw"], ["a"]);
    await fanOut(h, ["gw", "a"]);
    await h.clock.runUntilIdle();
    await fanOut(h, ["gw", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes).toMatchObject({ issued: 2, completed: 2, busy: 0 });
    // a model that throws once the fan-out is cut: the probe still runs out and frees its slot
    const throwing = {
      ...collectModel(),
      decide: (): never => {
        throw new Error("model failed");
      },
    };
    const failed = h.coordinator.fanOut(task, {
      peers: ["gw", "a"],
      budgetMs: 50,
      model: throwing,
      policy: "always-sync",
    });
    await expect(h.clock.runUntilSettled(failed)).rejects.toThrow("model failed");
    await h.clock.runUntilIdle();
    const after = h.coordinator.stats().horizonProbes;
    // next window: owed again, and the slot is free
    await h.clock.advance(60_000);
    await fanOut(h, ["gw", "a"]);
    await h.clock.runUntilIdle();
    expect(h.coordinator.stats().horizonProbes.issued).toBe(after.issued + 1);
    expect(h.coordinator.stats().horizonProbes.busy).toBe(after.busy);
  });
});
