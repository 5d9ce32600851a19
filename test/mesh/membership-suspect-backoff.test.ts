import { describe, expect, it } from "vitest";
import { SuspectBackoff } from "../../src/mesh/membership/suspect-backoff.js";

describe("SuspectBackoff", () => {
  it("probes a suspect at a doubling wait from the interval up to the cap, and starts over once cleared", () => {
    const capped: string[] = [];
    const b = new SuspectBackoff({
      intervalMs: 1_000,
      backoffMaxMs: 4_000,
      random: () => 0.5, // no jitter
      onCapped: (p, w) => capped.push(`${p} ${w}`),
    });
    const probesAt: number[] = [];
    for (let t = 0; t <= 20_000; t += 100) if (b.due("a", t, true)) probesAt.push(t);
    expect(probesAt).toEqual([0, 1_000, 3_000, 7_000, 11_000, 15_000, 19_000]);
    expect(capped).toEqual(["a 4000"]);
    // cleared (a good branch): always due, and the next suspicion starts at the interval again
    expect(b.due("a", 19_100, false)).toBe(true);
    expect(b.size).toBe(0);
    expect(b.due("a", 19_200, true)).toBe(true);
    expect(b.due("a", 20_100, true)).toBe(false);
    expect(b.due("a", 20_200, true)).toBe(true);
  });

  it("probes a peer whose probes are refused every round, and backs off again once they time out", () => {
    const b = new SuspectBackoff({ intervalMs: 1_000, backoffMaxMs: 8_000, random: () => 0.5 });
    const probesAt: number[] = [];
    // rounds every 1_000 ms (as `due` is asked once a round)
    for (let t = 0; t <= 4_000; t += 1_000) {
      if (b.due("a", t, true)) {
        probesAt.push(t);
        b.refused("a"); // nothing listening: answered at once
      }
    }
    expect(probesAt).toEqual([0, 1_000, 2_000, 3_000, 4_000]);
    // the probe sent at a first bad branch, refused: due at the very next round, not a wait later
    const c = new SuspectBackoff({ intervalMs: 1_000, random: () => 0.999 });
    c.sent("a", 0);
    c.refused("a");
    expect(c.due("a", 900, true)).toBe(true);
    // the next round after the last refusal, then timed-out probes (no `refused`) double the wait again
    const later: number[] = [];
    for (let t = 4_100; t <= 12_000; t += 100) if (b.due("a", t, true)) later.push(t);
    expect(later).toEqual([4_100, 5_100, 7_100, 11_100]);
  });

  it("counts a probe sent at the first bad branch, and jitters each wait within ±20%", () => {
    const b = new SuspectBackoff({ intervalMs: 1_000, random: () => 0 });
    b.sent("a", 0);
    expect(b.due("a", 799, true)).toBe(false);
    expect(b.due("a", 800, true)).toBe(true);
    const hi = new SuspectBackoff({ intervalMs: 1_000, random: () => 0.999 });
    hi.sent("a", 0);
    expect(hi.due("a", 1_198, true)).toBe(false);
    expect(hi.due("a", 1_200, true)).toBe(true);
  });

  it("rejects a cap below its range, naming the key", () => {
    expect(() => new SuspectBackoff({ intervalMs: 1_000, backoffMaxMs: 1 })).toThrow(
      /probe.suspectBackoffMaxMs/,
    );
  });
});
