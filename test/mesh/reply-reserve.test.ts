/** The Coordinate reply reserve: transit plus the window's overhead p99, bounded, forgetting a stall. */
import { describe, expect, it } from "vitest";
import { ReplyReserve } from "../../src/mesh/reply-reserve.js";

const make = (capped: number[] = []): ReplyReserve =>
  new ReplyReserve({ transitMs: 5, minMs: 1, maxMs: 50, maxShare: 0.5, onCapped: (ms) => capped.push(ms) });

/** A reserve of 3 ms transit, at most 100 ms or half the call, whose loop lateness is `late()`. */
const withLoop = (
  late: () => number,
  onCapped?: ConstructorParameters<typeof ReplyReserve>[0]["onCapped"],
): ReplyReserve =>
  new ReplyReserve({
    transitMs: 3,
    minMs: 1,
    maxMs: 100,
    maxShare: 0.5,
    loopLateMs: late,
    ...(onCapped !== undefined && { onCapped }),
  });

describe("ReplyReserve", () => {
  it("keeps the transit alone before any overhead is seen, and adds the largest while samples are few", () => {
    const r = make();
    expect(r.current(0)).toEqual({
      ms: 5,
      wantedMs: 5,
      kind: "prior",
      transitMs: 5,
      overheadMs: 0,
      loopMs: 0,
    });
    r.record(3, 0);
    r.record(7, 1);
    expect(r.current(2)).toEqual({
      ms: 12,
      wantedMs: 12,
      kind: "prior",
      transitMs: 5,
      overheadMs: 7,
      loopMs: 0,
    });
  });

  it("adds the window's p99 once it holds enough samples", () => {
    const r = make();
    for (let i = 0; i < 99; i++) r.record(1, i);
    r.record(9, 99);
    // nearest-rank p99 of 99 × 1 ms and one 9 ms is 1 ms
    expect(r.current(1_000)).toEqual({
      ms: 6,
      wantedMs: 6,
      kind: "measured",
      transitMs: 5,
      overheadMs: 1,
      loopMs: 0,
    });
  });

  it("sees an overhead above the reserve at once, and forgets it after the window", () => {
    const r = make();
    for (let i = 0; i < 30; i++) r.record(1, i);
    expect(r.current(30).ms).toBe(6);
    r.record(20, 31);
    expect(r.current(32).ms).toBe(25);
    for (let i = 0; i < 30; i++) r.record(1, 11_000 + i);
    expect(r.current(11_100)).toMatchObject({ ms: 6, wantedMs: 6, kind: "measured" });
  });

  it("caps the reserve at maxMs and reports the cap; ignores nonsense samples", () => {
    const capped: number[] = [];
    const r = make(capped);
    r.record(Number.NaN, 0);
    r.record(-1, 0);
    r.record(Infinity, 0);
    expect(r.current(1).ms).toBe(5);
    r.record(80, 2);
    expect(r.current(3)).toMatchObject({ ms: 50, wantedMs: 85, kind: "prior" });
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
    expect(r.current(30, 200)).toMatchObject({ ms: 45, wantedMs: 45, kind: "measured" });
    expect(r.current(30, 20)).toMatchObject({ ms: 10, wantedMs: 45, kind: "measured" });
    expect(caps).toEqual([10]);
    // the floor holds even above the share (a call with 1 ms left)
    expect(r.current(30, 1).ms).toBe(1);
  });

  it("a caller's bound replaces maxMs (an overloaded node's), the share still caps, and the log names the bound", () => {
    const bounds: string[] = [];
    const r = withLoop(
      () => 400,
      (_w, cap, _parts, bound) => bounds.push(`${bound} ${cap}`),
    );
    for (let i = 0; i < 30; i++) r.record(10, i);
    expect(r.current(30, 5_000).ms).toBe(100);
    expect(r.current(30, 5_000, Infinity).ms).toBe(413);
    expect(r.current(30, 600, Infinity).ms).toBe(300);
    expect(bounds).toEqual(["maxMs 100", "maxShare 300"]);
  });

  it("adds the loop's recent lateness, which the read of a late request met, under the same caps", () => {
    let late = 0;
    const capped: { wantedMs: number; capMs: number; loopMs: number }[] = [];
    const r = withLoop(
      () => late,
      (wantedMs, capMs, parts) => capped.push({ wantedMs, capMs, loopMs: parts.loopMs }),
    );
    for (let i = 0; i < 30; i++) r.record(10, i);
    expect(r.current(30, 90)).toEqual({
      ms: 13,
      wantedMs: 13,
      kind: "measured",
      transitMs: 3,
      overheadMs: 10,
      loopMs: 0,
    });
    late = 20;
    expect(r.current(30, 90)).toEqual({
      ms: 33,
      wantedMs: 33,
      kind: "measured",
      transitMs: 3,
      overheadMs: 10,
      loopMs: 20,
    });
    // a 90 ms call keeps at most 45 ms: the loop's part does not take the call past maxShare
    late = 60;
    expect(r.current(30, 90)).toEqual({
      ms: 45,
      wantedMs: 73,
      kind: "measured",
      transitMs: 3,
      overheadMs: 10,
      loopMs: 60,
    });
    expect(capped).toEqual([{ wantedMs: 73, capMs: 45, loopMs: 60 }]);
    // nor past maxMs
    expect(r.current(30, 1_000).ms).toBe(73);
    late = 200;
    expect(r.current(30, 1_000).ms).toBe(100);
  });

  it("counts a nonsense loop lateness as none", () => {
    for (const late of [Number.NaN, -5, Infinity]) {
      const r = withLoop(() => late);
      expect(r.current(0, 90)).toMatchObject({ ms: 3, wantedMs: 3, loopMs: 0 });
    }
  });
});
