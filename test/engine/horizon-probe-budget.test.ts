/** The horizon-probe budget (src/engine/horizon-probes.ts): owed probes per peer, credit, the caps. */
import { describe, expect, it } from "vitest";
import { HorizonProbes, probesToPassCut, stalledCut } from "../../src/engine/horizon-probes.js";
import { TailswarmError } from "../../src/errors.js";

describe("HorizonProbes", () => {
  it("owes each cut peer minPerPeerPerWindow probes per window, whatever the share's credit", () => {
    const probes = new HorizonProbes({ share: 1e-6, minPerPeerPerWindow: 2, windowMs: 10_000 });
    for (const peer of ["a", "b"]) {
      expect(probes.candidate(peer, 0)).toBe(true);
      expect(probes.take(peer, 0)).toBe(true);
      probes.ended(peer, true);
      expect(probes.take(peer, 1)).toBe(true);
      probes.ended(peer, true);
    }
    // the owed ones spent the initial credit not at all: one more, then next to no credit is left
    expect(probes.take("a", 2)).toBe(true);
    expect(probes.candidate("b", 2)).toBe(false);
    expect(probes.take("b", 2)).toBe(false);
    // the next window owes them again
    expect(probes.take("b", 10_001)).toBe(true);
    expect(probes.stats()).toEqual({ issued: 6, completed: 4, expired: 0, capped: 0, busy: 0 });
    // share 0 turns probes off, owed ones too
    expect(new HorizonProbes({ share: 0 }).take("a", 0)).toBe(false);
  });

  it("beyond the owed ones, probes are paid with credit earned by cut branches", () => {
    const probes = new HorizonProbes({
      share: 0.5,
      minPerPeerPerWindow: 1,
      maxPerPeerPerWindow: 10,
      maxInFlightPerPeer: 10,
    });
    expect(probes.take("a", 0)).toBe(true); // owed
    expect(probes.take("a", 0)).toBe(true); // the initial credit
    expect(probes.take("a", 0)).toBe(false);
    probes.cut(1); // half a probe
    expect(probes.candidate("a", 0)).toBe(false);
    probes.cut(1);
    expect(probes.take("a", 0)).toBe(true);
  });

  it("caps per peer and over all peers per window, counts the refusals and names each cap", () => {
    const limits: [string, Record<string, unknown>][] = [];
    const probes = new HorizonProbes(
      {
        share: 1,
        minPerPeerPerWindow: 3,
        maxPerPeerPerWindow: 2,
        maxPerWindow: 3,
        maxInFlightPerPeer: 10,
        windowMs: 1_000,
      },
      (limit, fields) => limits.push([limit, fields]),
    );
    expect(probes.take("a", 0)).toBe(true);
    expect(probes.take("a", 0)).toBe(true);
    expect(probes.take("a", 0)).toBe(false); // per-peer cap, though one more is owed
    expect(probes.take("b", 0)).toBe(true);
    expect(probes.take("c", 0)).toBe(false); // global cap
    expect(probes.stats()).toMatchObject({ issued: 3, capped: 2 });
    expect(limits).toEqual([
      ["horizonProbe.maxPerPeerPerWindow", { max: 2, peer: "a", windowMs: 1_000 }],
      ["horizonProbe.maxPerWindow", { max: 3, peer: "c", windowMs: 1_000 }],
    ]);
    expect(probes.take("c", 1_001)).toBe(true); // a new window
  });

  it("runs at most maxInFlightPerPeer probes of a peer at once, so a burst of cuts in one slow stretch spends one", () => {
    const probes = new HorizonProbes({ share: 1e-6, minPerPeerPerWindow: 4, maxInFlightPerPeer: 1 });
    // three fan-outs cut side by side in one slow stretch of "a": one probe, the others refused
    expect(probes.take("a", 0)).toBe(true);
    expect(probes.take("a", 0)).toBe(false);
    expect(probes.take("a", 1)).toBe(false);
    expect(probes.take("b", 1)).toBe(true); // another peer has its own
    expect(probes.stats()).toMatchObject({ issued: 2, capped: 2 });
    // the stretch ends with the probe's answer: the next stretch gets one of the owed probes still left
    probes.ended("a", true);
    expect(probes.take("a", 400)).toBe(true);
    probes.ended("a", false);
    expect(probes.take("a", 900)).toBe(true);
    expect(probes.stats()).toMatchObject({ issued: 4, completed: 1, expired: 1, capped: 2 });
    // while a probe of "a" runs, a branch to "a" is no candidate (no longer deadline is sent): busy
    expect(probes.candidate("a", 950)).toBe(false);
    expect(probes.candidate("c", 950)).toBe(true);
    expect(probes.stats()).toMatchObject({ busy: 1 }); // "b" still runs its own: not counted, not asked
    // a larger limit lets the burst through, up to the per-peer cap
    const burst = new HorizonProbes({ share: 1e-6, minPerPeerPerWindow: 4, maxInFlightPerPeer: 3 });
    expect([0, 0, 0, 0].map((t) => burst.take("a", t))).toEqual([true, true, true, false]);
  });

  it("calls a cut a stall only when most of a fan-out of several was cut and the deadline was noticed late", () => {
    // on time: peers slower than the budget, however many — they are what probes are for
    expect(stalledCut(40, 40, 0.5, 90)).toBe(false);
    expect(stalledCut(2, 2, 0, 50)).toBe(false);
    // late by more than a tenth of the budget, most of the fan-out cut: the caller stalled
    expect(stalledCut(30, 40, 20, 90)).toBe(true);
    expect(stalledCut(30, 40, 9, 90)).toBe(false);
    // late, but only a few cut: those peers were slow on their own
    expect(stalledCut(5, 40, 50, 90)).toBe(false);
    // a fan-out of one is never a stall; the 1 ms floor holds for tiny budgets
    expect(stalledCut(1, 1, 100, 90)).toBe(false);
    expect(stalledCut(4, 4, 0.9, 2)).toBe(false);
    expect(stalledCut(4, 4, 1.1, 2)).toBe(true);
  });

  it("owes nothing for a stalled cut: a stall does not spend the window's budget", () => {
    const probes = new HorizonProbes({
      share: 1e-6,
      minPerPeerPerWindow: 2,
      maxPerWindow: 30,
      windowMs: 10_000,
    });
    // a stall cuts 40 peers at once: the initial credit pays one probe, the rest are owed nothing
    const stall = Array.from({ length: 40 }, (_, i) => probes.take(`fast-${i}`, 0, true));
    expect(stall.filter(Boolean)).toHaveLength(1);
    // the slow peer, cut alone later in the window, still gets its owed probes: the global cap has room
    expect(probes.take("slow", 100, false)).toBe(true);
    probes.ended("slow", true);
    expect(probes.take("slow", 500, false)).toBe(true);
    expect(probes.stats()).toMatchObject({ issued: 3, capped: 0 });
  });

  it("takes at most maxPerFanout of one cut, owed or not, the peers probed least this window first", () => {
    const limits: [string, Record<string, unknown>][] = [];
    const probes = new HorizonProbes(
      { share: 1e-6, minPerPeerPerWindow: 4, maxPerFanout: 2, maxInFlightPerPeer: 10, windowMs: 10_000 },
      (limit, fields) => limits.push([limit, fields]),
    );
    const cut = ["a", "b", "c", "d"];
    // every one is owed: the first two in the order given, the other two refused by the fan-out's cap
    expect(probes.takeCut(cut, 0)).toEqual([true, true, false, false]);
    expect(probes.stats()).toMatchObject({ issued: 2, capped: 2 });
    expect(limits).toEqual([
      ["horizonProbe.maxPerFanout", { max: 2, peer: "c" }],
      ["horizonProbe.maxPerFanout", { max: 2, peer: "d" }],
    ]);
    // the next cut of the window starts with the peers not yet probed
    expect(probes.takeCut(cut, 1)).toEqual([false, false, true, true]);
    // a peer another cap refuses does not use up a slot: "a" still runs its probe, "b" and "c" take the two
    const busy = new HorizonProbes({
      share: 1e-6,
      minPerPeerPerWindow: 4,
      maxInFlightPerPeer: 1,
      maxPerFanout: 2,
    });
    expect(busy.takeCut(["a", "b", "c"], 0)).toEqual([true, true, false]);
    busy.ended("b", true);
    expect(busy.takeCut(["c"], 1)).toEqual([true]);
    busy.ended("c", true);
    expect(busy.takeCut(["a", "b", "c"], 2)).toEqual([false, true, true]);
    expect(busy.stats()).toMatchObject({ issued: 5, capped: 2 });
    // past the cap, a peer neither owed nor paid for is not a refusal: a stalled cut owes nothing
    const stalled = new HorizonProbes({ share: 1e-6, minPerPeerPerWindow: 4, maxPerFanout: 1 });
    expect(stalled.takeCut(["a", "b", "c"], 0, true)).toEqual([true, false, false]);
    expect(stalled.stats()).toMatchObject({ issued: 1, capped: 0 });
    // 0 turns the cap into "no probes"
    expect(new HorizonProbes({ maxPerFanout: 0 }).takeCut(["a"], 0)).toEqual([false]);
  });

  it("takes only what the cut wants, below maxPerFanout, refusing none; a peer a cap refuses passes to the next", () => {
    const limits: string[] = [];
    const probes = new HorizonProbes(
      { share: 1e-6, minPerPeerPerWindow: 4, maxPerFanout: 3, maxInFlightPerPeer: 1, windowMs: 10_000 },
      (limit) => limits.push(limit),
    );
    const cut = ["a", "b", "c", "d"];
    expect(probes.takeCut(cut, 0, false, 1)).toEqual([true, false, false, false]);
    // side by side: "a" still runs, so the next cut's one goes to the least probed of the others
    expect(probes.takeCut(cut, 1, false, 1)).toEqual([false, true, false, false]);
    expect(probes.stats()).toMatchObject({ issued: 2, capped: 0 });
    expect(limits).toEqual([]);
    // wanting more than the cap: the cap still holds, and its refusals count
    expect(probes.takeCut(cut, 2, false, 5)).toEqual([false, false, true, true]);
    expect(probes.stats()).toMatchObject({ issued: 4, capped: 2 });
    expect(limits).toEqual(["horizonProbe.maxInFlightPerPeer", "horizonProbe.maxInFlightPerPeer"]);
  });

  it("counts as refused by maxPerFanout only what the cut wanted beyond it", () => {
    const limits: string[] = [];
    const probes = new HorizonProbes(
      { share: 1e-6, minPerPeerPerWindow: 4, maxPerFanout: 3, maxInFlightPerPeer: 1, windowMs: 10_000 },
      (limit) => limits.push(limit),
    );
    const cut = Array.from({ length: 10 }, (_, i) => `p${i}`);
    // 10 owed, 6 wanted: 3 taken, 3 refused by the cap (not the 7 left)
    expect(probes.takeCut(cut, 0, false, 6).filter(Boolean)).toHaveLength(3);
    expect(probes.stats()).toMatchObject({ issued: 3, capped: 3 });
    expect(limits).toEqual(Array(3).fill("horizonProbe.maxPerFanout"));
  });

  it("probesToPassCut: one for all of n, cut − still needed + 1 for a quorum", () => {
    // all of n: every cut branch is still needed, so any one's late answer passes the cut
    expect(probesToPassCut(6, 6)).toBe(1);
    expect(probesToPassCut(1, 1)).toBe(1);
    // 3 of 10, 1 answered, 4 cut: 2 still needed, the 2nd smallest of 4 bounds passes once 3 run on
    expect(probesToPassCut(4, 2)).toBe(3);
    // one still needed of 4 cut: every one must run on
    expect(probesToPassCut(4, 1)).toBe(4);
    // a requirement met or past: at least one
    expect(probesToPassCut(2, 0)).toBe(1);
    // too few candidates to pass the cut (the other cut peers' tails are known): one, for the tail alone
    expect(probesToPassCut(4, 2, 2)).toBe(1);
    expect(probesToPassCut(4, 2, 3)).toBe(3);
    expect(probesToPassCut(6, 6, 1)).toBe(1);
  });

  it("rejects a bad option, naming the key", () => {
    let error: unknown;
    try {
      new HorizonProbes({ minPerPeerPerWindow: -1 });
    } catch (e) {
      error = e;
    }
    expect(TailswarmError.is(error, "INVALID_CONFIG")).toBe(true);
    expect((error as Error).message).toContain("horizonProbe.minPerPeerPerWindow");
  });
});
