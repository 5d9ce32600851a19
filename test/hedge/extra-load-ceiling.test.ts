import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ExtraLoadCeiling } from "../../src/hedge/extra-load-ceiling.js";

/** A stream: fan-outs at increasing times (with their primaries), each asking for backups a little later. */
const arbStream = fc.record({
  maxExtraLoad: fc.double({ min: 0, max: 0.5, noNaN: true }),
  minBackupsPerWindow: fc.integer({ min: 0, max: 3 }),
  windowMs: fc.integer({ min: 50, max: 2_000 }),
  fanouts: fc.array(
    fc.record({
      // times to the µs, as a clock gives them
      gapMs: fc.integer({ min: 0, max: 300_000 }).map((us) => us / 1000),
      primaries: fc.integer({ min: 1, max: 3 }),
      asks: fc.array(
        fc.integer({ min: 0, max: 400_000 }).map((us) => us / 1000),
        { maxLength: 3 },
      ),
    }),
    { minLength: 1, maxLength: 120 },
  ),
});

describe("ExtraLoadCeiling", () => {
  it("never exceeds maxExtraLoad × primaries + minBackupsPerWindow over any window", () => {
    fc.assert(
      fc.property(arbStream, (s) => {
        const ceiling = new ExtraLoadCeiling(s);
        const starts: { at: number; primaries: number; backups: number }[] = [];
        // events in time order: starts, and backup asks of earlier fan-outs
        const events: { t: number; kind: "start" | "ask"; i: number }[] = [];
        let t = 0;
        s.fanouts.forEach((f, i) => {
          t += f.gapMs;
          events.push({ t, kind: "start", i });
          for (const a of f.asks) events.push({ t: t + a, kind: "ask", i });
        });
        events.sort((a, b) => a.t - b.t || (a.kind === "start" ? -1 : 1));
        const stamps = new Map<number, number>();
        for (const e of events) {
          const f = s.fanouts[e.i]!;
          if (e.kind === "start") {
            const at = ceiling.start(e.t, f.primaries);
            stamps.set(e.i, at);
            starts.push({ at, primaries: f.primaries, backups: 0 });
          } else if (ceiling.admit(stamps.get(e.i)!, e.t)) {
            const at = stamps.get(e.i)!;
            starts.find((x) => x.at === at)!.backups++;
          }
        }
        // every window (w, w + W]: the counts change only at w = t or w = t − W, so those (and between) are all
        const ws = starts.flatMap((x) => [x.at, x.at - s.windowMs, x.at - 1e-6, x.at - s.windowMs - 1e-6]);
        for (const w of ws) {
          let p = 0;
          let b = 0;
          for (const x of starts)
            if (x.at > w && x.at <= w + s.windowMs) {
              p += x.primaries;
              b += x.backups;
            }
          expect(b).toBeLessThanOrEqual(s.maxExtraLoad * p + s.minBackupsPerWindow + 1e-6);
        }
      }),
      { numRuns: 300 },
    );
  });

  it("spreads backups at the ratio: any window holding the fan-outs since a backup's start counts", () => {
    const ceiling = new ExtraLoadCeiling({ maxExtraLoad: 0.1, minBackupsPerWindow: 1, windowMs: 1_000 });
    const at: number[] = [];
    for (let i = 0; i < 30; i++) at.push(ceiling.start(i, 1));
    expect(ceiling.admit(at[0]!, 29)).toBe(true);
    // the window from fan-out 5 on holds 25 primaries: 2 backups > 0.1 × 25 + 1 would exceed it
    expect(ceiling.admit(at[5]!, 29)).toBe(false);
    // from fan-out 10 on: 20 primaries, 2 ≤ 0.1 × 20 + 1 … but the window from 0 holds 30: 2 ≤ 4
    expect(ceiling.admit(at[10]!, 29)).toBe(true);
    expect(ceiling.stats()).toEqual({ admitted: 2, refused: 1 });
  });

  it("with no allowance, refuses the latest fan-out's backup (a window may hold that fan-out alone)", () => {
    const ceiling = new ExtraLoadCeiling({ maxExtraLoad: 0.5, minBackupsPerWindow: 0, windowMs: 1_000 });
    for (let i = 0; i < 10; i++) ceiling.start(i, 1);
    expect(ceiling.admit(9, 9)).toBe(false);
  });

  it("says what is wrong with a bad option", () => {
    expect(() => new ExtraLoadCeiling({ maxExtraLoad: 2 })).toThrow(/hedge.maxExtraLoad: got 2/);
  });
});
