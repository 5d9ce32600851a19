/** The Coordinate reply reserve: transit plus the window's overhead p99, bounded, forgetting a stall. */
import { describe, expect, it } from "vitest";
import { ReplyReserve } from "../../src/mesh/reply-reserve.js";

const make = (capped: number[] = []): ReplyReserve =>
  new ReplyReserve({ transitMs: 5, minMs: 1, maxMs: 50, maxShare: 0.5, onCapped: (ms) => capped.push(ms) });

describe("ReplyReserve", () => {
  it("keeps the transit alone before any overhead is seen, and adds the largest while samples are few", () => {
    const r = make();
    expect(r.current(0)).toEqual({ ms: 5, wantedMs: 5, kind: "prior" });
    r.record(3, 0);
    r.record(7, 1);
    expect(r.current(2)).toEqual({ ms: 12, wantedMs: 12, kind: "prior" });
  });

  it("adds the window's p99 once it holds enough samples", () => {
    const r = make();
    for (let i = 0; i < 99; i++) r.record(1, i);
    r.record(9, 99);
    // nearest-rank p99 of 99 × 1 ms and one 9 ms is 1 ms
    expect(r.current(1_000)).toEqual({ ms: 6, wantedMs: 6, kind: "measured" });
  });

  it("sees an overhead above the reserve at once, and forgets it after the window", () => {
    const r = make();
    for (let i = 0; i < 30; i++) r.record(1, i);
    expect(r.current(30).ms).toBe(6);
    r.record(20, 31);
    expect(r.current(32).ms).toBe(25);
    for (let i = 0; i < 30; i++) r.record(1, 11_000 + i);
    expect(r.current(11_100)).toEqual({ ms: 6, wantedMs: 6, kind: "measured" });
  });

  it("caps the reserve at maxMs and reports the cap; ignores nonsense samples", () => {
    const capped: number[] = [];
    const r = make(capped);
    r.record(Number.NaN, 0);
    r.record(-1, 0);
    r.record(Infinity, 0);
    expect(r.current(1).ms).toBe(5);
    r.record(80, 2);
    expect(r.current(3)).toEqual({ ms: 50, wantedMs: 85, kind: "prior" });
    expect(capped).toEqual([85]);
  });

  it("takes at most maxShare of the call's time left, so a short call keeps room to answer", () => {
    const caps: number[] = [];
    const r = new ReplyReserve({
      transitMs: 5,
      minMs: 1,
      maxMs: 100,
      maxShare: 0.5,
      onCapped: (_w, cap) => caps.push(cap),
    });
    for (let i = 0; i < 30; i++) r.record(i === 29 ? 40 : 2, i);
    // wanted 45 ms: a 200 ms call keeps it all, a 20 ms call keeps 10 ms (and says it wanted 45)
    expect(r.current(30, 200)).toEqual({ ms: 45, wantedMs: 45, kind: "measured" });
    expect(r.current(30, 20)).toEqual({ ms: 10, wantedMs: 45, kind: "measured" });
    expect(caps).toEqual([10]);
    // the floor holds even above the share (a call with 1 ms left)
    expect(r.current(30, 1).ms).toBe(1);
  });
});
