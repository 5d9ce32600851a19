import { describe, expect, it } from "vitest";
import { combineObservers } from "../../src/engine/combine-observers.js";
import type { FanoutObserver, FanoutOutcome } from "../../src/engine/outcome.js";

const outcome = { fanoutId: "f" } as FanoutOutcome;

describe("combineObservers", () => {
  it("calls every observer in order; a throw goes to that observer's onError, then the combined one", () => {
    const calls: string[] = [];
    const boom = new Error("boom");
    const a: FanoutObserver = {
      onFanoutEnd: () => {
        calls.push("a");
        throw boom;
      },
      onError: (e) => calls.push(`a.onError ${(e as Error).message}`),
    };
    const b: FanoutObserver = { onFanoutEnd: () => calls.push("b"), onError: () => calls.push("b.onError") };
    const combined = combineObservers([a, undefined, b], (e) => calls.push(`sink ${(e as Error).message}`));
    combined.onFanoutEnd(outcome);
    expect(calls).toEqual(["a", "a.onError boom", "sink boom", "b"]);
  });

  it("never throws: not from a hook, not from an onError, not without any onError", () => {
    const throwing: FanoutObserver = {
      onDecision: () => {
        throw new Error("hook");
      },
      onBranchEnd: () => {
        throw new Error("hook");
      },
      onViolation: () => {
        throw new Error("hook");
      },
      onError: () => {
        throw new Error("handler");
      },
    };
    const combined = combineObservers([throwing, { onBranchEnd: () => undefined }], () => {
      throw new Error("sink");
    });
    expect(() => combined.onDecision("f", {} as never, {} as never)).not.toThrow();
    expect(() => combined.onBranchEnd("f", {} as never)).not.toThrow();
    expect(() => combined.onViolation("f", new Error("v"))).not.toThrow();
    expect(() =>
      combineObservers([{ onFanoutEnd: () => JSON.parse("{") as never }]).onFanoutEnd(outcome),
    ).not.toThrow();
  });

  it("its own onError tells every observer, then the combined one; hooks work when read off the object", () => {
    const told: string[] = [];
    const combined = combineObservers(
      [{ onError: () => told.push("a") }, {}, { onError: () => told.push("c") }],
      () => told.push("sink"),
    );
    const { onError, onFanoutEnd } = combined;
    onError(new Error("x"));
    expect(told).toEqual(["a", "c", "sink"]);
    expect(() => onFanoutEnd(outcome)).not.toThrow();
  });

  it("calls class-based observers with their own this", () => {
    class Counter implements FanoutObserver {
      ends = 0;
      errors = 0;
      onFanoutEnd(): void {
        this.ends++;
        if (this.ends === 2) throw new Error("second");
      }
      onError(): void {
        this.errors++;
      }
    }
    const c = new Counter();
    const combined = combineObservers([c]);
    combined.onFanoutEnd(outcome);
    combined.onFanoutEnd(outcome);
    expect([c.ends, c.errors]).toEqual([2, 1]);
  });

  it("gives back a combination combined alone, and wraps it again only to add a sink", () => {
    const inner = combineObservers([{}, {}]);
    expect(combineObservers([inner, undefined])).toBe(inner);
    const told: string[] = [];
    const outer = combineObservers([inner], () => told.push("sink"));
    expect(outer).not.toBe(inner);
    outer.onError(new Error("x"));
    expect(told).toEqual(["sink"]);
  });
});
