import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resolveOptions } from "../../src/estimate/options.js";
import type { LatencyBookOptions } from "../../src/estimate/options.js";
import { PeerLatency } from "../../src/estimate/peer-latency.js";
import { ManualClock } from "./helpers.js";

const WINDOW = 10_000;
const SLICES = 5;
const SLICE = WINDOW / SLICES;

function peer(clock: ManualClock, options: Partial<LatencyBookOptions> = {}): PeerLatency {
  return new PeerLatency(
    "p",
    resolveOptions({ windowMs: WINDOW, slices: SLICES, minSamples: 1, ...options }),
    clock,
  );
}

/** `n` answers of `ms` spread evenly over the next `spanMs`. */
function answers(p: PeerLatency, clock: ManualClock, n: number, spanMs: number, ms = 10): void {
  for (let i = 0; i < n; i++) {
    clock.t += spanMs / n;
    p.record(ms, clock.t);
  }
}

describe("PeerLatency window stretch (windowMinCompletions, windowMaxStretch)", () => {
  it("keeps a tail answer past windowMs while the window holds fewer completions than windowMinCompletions", () => {
    const clock = new ManualClock(0);
    const p = peer(clock);
    answers(p, clock, 30, 1_000);
    p.record(300, clock.t); // one answer from a slow stretch
    answers(p, clock, 40, 12_000); // 40 more in 12 s: the window alone no longer holds the slow one
    const e = p.estimate(clock.t);
    expect(e.samples).toBe(71);
    expect(e.p99Ms).toBeGreaterThan(290);
    expect(e.p99Kind).toBe("lower-bound"); // 71 completions cannot place a p99
    answers(p, clock, 40, 20_000); // past windowMaxStretch windows: it goes whatever the count
    expect(p.estimate(clock.t).p99Ms).toBeLessThan(20);
  });

  it("forgets by time alone once the window holds windowMinCompletions (a busy peer stays as fresh as before)", () => {
    const clock = new ManualClock(0);
    const p = peer(clock);
    p.record(300, clock.t);
    answers(p, clock, 300, 12_100); // 250 in the last 10 s
    const e = p.estimate(clock.t);
    expect(e.samples).toBeLessThanOrEqual((300 * (WINDOW + SLICE)) / 12_100 + 1);
    expect(e.p99Ms).toBeLessThan(20);
    expect(e.p99Kind).toBe("known");
  });

  it("windowMinCompletions 0 or windowMaxStretch 1 is the time window alone", () => {
    for (const o of [{ windowMinCompletions: 0 }, { windowMaxStretch: 1 }]) {
      const clock = new ManualClock(0);
      const p = peer(clock, o);
      p.record(300, clock.t);
      answers(p, clock, 10, 12_100);
      const e = p.estimate(clock.t);
      expect(e.samples).toBeLessThan(10);
      expect(e.p99Ms).toBeLessThan(20);
    }
  });

  it("names the key, the value and the range of a bad setting", () => {
    expect(() => resolveOptions({ windowMaxStretch: 0 })).toThrow(
      /estimator\.windowMaxStretch: got 0, expected an integer >= 1 <= 16/,
    );
    expect(() => resolveOptions({ slices: 64, windowMaxStretch: 16 })).toThrow(
      "estimator.windowMaxStretch: got 16, expected at most 3 (slices 64 × windowMaxStretch <= 192 ring slots per peer)",
    );
    expect(
      resolveOptions({ slices: 64, windowMaxStretch: 16, windowMinCompletions: 0 }).windowMaxStretch,
    ).toBe(16);
    expect(() => resolveOptions({ windowMinCompletions: 1.5 })).toThrow(
      /estimator\.windowMinCompletions: got 1\.5/,
    );
  });

  it("a censored end leaves with the completions of its slice", () => {
    const clock = new ManualClock(0);
    const p = peer(clock);
    answers(p, clock, 20, 1_000);
    p.begin(clock.t, clock.t + 80).timedOut();
    answers(p, clock, 20, 12_000);
    expect(p.estimate(clock.t)).toMatchObject({ samples: 40, censoredEnds: 1 });
    answers(p, clock, 100, 10_000); // the newer slices now hold windowMinCompletions by themselves
    expect(p.estimate(clock.t)).toMatchObject({ censoredEnds: 0 });
  });

  it("a read at an older time does not keep a censored end its slice's completions no longer hold", () => {
    const clock = new ManualClock(0);
    const p = peer(clock, { windowMinCompletions: 1 });
    p.recordCensored(80, 0);
    p.record(10, 25_000); // the newest slice holds windowMinCompletions: the end's slice is past the window
    p.cdf(1_000); // a read back-dated into the end's slice
    expect(p.estimate(25_000)).toMatchObject({ samples: 1, censoredEnds: 0 });
  });

  it("holds the newest slices that bring it to windowMinCompletions, never fewer, never past the stretch (property)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 40_000 }), { minLength: 1, maxLength: 300 }),
        fc.integer({ min: 1, max: 80 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 45_000 }),
        (offsets, minCompletions, stretch, readAfter) => {
          const clock = new ManualClock(0);
          const p = peer(clock, { windowMinCompletions: minCompletions, windowMaxStretch: stretch });
          const times = [...offsets].sort((a, b) => a - b);
          for (const t of times) {
            clock.t = t;
            p.record(10, t);
            p.estimate(t); // reads trim as they go: what is kept must not depend on when it was read
          }
          const now = (times[times.length - 1] as number) + readAfter;
          clock.t = now;
          // the model: count per slice number; keep the window's own slices, then older ones newest
          // first while the count is short, none older than `stretch` windows
          const epoch = Math.floor(now / SLICE);
          const perEpoch = new Map<number, number>();
          for (const t of times) {
            const e = Math.floor(t / SLICE);
            perEpoch.set(e, (perEpoch.get(e) ?? 0) + 1);
          }
          let expected = 0;
          for (let e = epoch; e > epoch - SLICES; e--) expected += perEpoch.get(e) ?? 0;
          for (let e = epoch - SLICES; e > epoch - SLICES * stretch && expected < minCompletions; e--)
            expected += perEpoch.get(e) ?? 0;
          expect(p.estimate(now).samples).toBe(expected);
        },
      ),
      { numRuns: 300 },
    );
  });

  it("keeps the same answers and ends whenever it is read: censored ends, reset, back-dated times, FIFO overflow (property)", () => {
    const step = fc.oneof(
      fc.record({ kind: fc.constant("answer" as const), t: fc.integer({ min: 0, max: 40_000 }) }),
      fc.record({ kind: fc.constant("end" as const), t: fc.integer({ min: 0, max: 40_000 }) }),
      fc.record({ kind: fc.constant("reset" as const), t: fc.constant(0) }),
    );
    fc.assert(
      fc.property(
        fc.array(fc.tuple(step, fc.option(fc.double({ min: 0, max: 1, noNaN: true }))), { maxLength: 200 }),
        fc.integer({ min: 1, max: 60 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 45_000 }),
        (steps, minCompletions, stretch, readAfter) => {
          // maxSamplesPerPeer 16: the FIFO drops its oldest whatever the reads
          const o = {
            windowMinCompletions: minCompletions,
            windowMaxStretch: stretch,
            maxSamplesPerPeer: 16,
          };
          const read = peer(new ManualClock(0), o);
          const unread = peer(new ManualClock(0), o);
          let latest = 0;
          let sinceReset = -1; // the latest write since the last reset (a reset ring starts at its first use)
          for (const [s, readAt] of steps) {
            latest = Math.max(latest, s.t);
            sinceReset = s.kind === "reset" ? -1 : Math.max(sinceReset, s.t);
            for (const p of [read, unread]) {
              if (s.kind === "answer") p.record(10, s.t);
              else if (s.kind === "end") p.recordCensored(80, s.t);
              else p.reset();
            }
            // a read at or before the latest write (a later one would move the clock for one of the two)
            if (readAt !== null && sinceReset >= 0) read.cdf(Math.floor(readAt * sinceReset));
          }
          const now = latest + readAfter;
          const a = read.estimate(now);
          const b = unread.estimate(now);
          expect({ samples: a.samples, censoredEnds: a.censoredEnds }).toEqual({
            samples: b.samples,
            censoredEnds: b.censoredEnds,
          });
        },
      ),
      { numRuns: 300 },
    );
  });
});
