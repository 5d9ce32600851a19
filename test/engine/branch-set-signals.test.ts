import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { BranchSet } from "../../src/engine/branch-set.js";
import type { BranchRequest, BranchResult, PeerTransport } from "../../src/engine/transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";

/** A transport that holds every call until the test ends it, and ends it `abandoned` when its signal aborts. */
function heldTransport(): {
  transport: PeerTransport;
  calls: Map<string, { signal: AbortSignal; end: (r: BranchResult) => void; req: BranchRequest }>;
} {
  const calls = new Map<
    string,
    { signal: AbortSignal; end: (r: BranchResult) => void; req: BranchRequest }
  >();
  const transport: PeerTransport = {
    branch: (peer, req, { signal }) =>
      new Promise((resolve) => {
        calls.set(peer, { signal, end: resolve, req });
        signal.addEventListener("abort", () => resolve({ kind: "abandoned", lostWorkMs: 1 }), { once: true });
      }),
  };
  return { transport, calls };
}

function branchSet(transport: PeerTransport): BranchSet<unknown> {
  const clock = new SimClock({ start: 1_000 });
  return new BranchSet({
    transport,
    clock,
    book: new LatencyBook({ windowMs: 10_000 }, clock),
    model: predicateModel<unknown, string>({ prior: "none", decide: () => "x", canFlip: () => true }),
    fanoutId: "f",
    origin: "test",
    hop: 0,
    deadline: 2_000,
    task: { kind: "echo", payload: null },
  });
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

describe("BranchSet abort signals", () => {
  it("gives the fan-out's branches one shared signal, and a candidate a signal of its own", () => {
    const { transport, calls } = heldTransport();
    const set = branchSet(transport);
    set.issue(["a", "b", "c"], (peer) => peer === "c");
    expect(calls.get("a")!.signal).toBe(calls.get("b")!.signal);
    expect(calls.get("c")!.signal).not.toBe(calls.get("a")!.signal);
    expect(set.branches.map((b) => b.own !== undefined)).toEqual([false, false, true]);
  });

  it("stops the shared signal only when every branch on it still out is abandoned", async () => {
    const { transport, calls } = heldTransport();
    const set = branchSet(transport);
    set.issue(["a", "b", "c"]);
    const [a, b, c] = set.branches;
    set.abandon(a!, "decided", "decided");
    expect(a!.abandonedByUs).toBe(true);
    expect(calls.get("a")!.signal.aborted).toBe(false); // b and c still run on it
    calls.get("b")!.end({ kind: "answer", answer: 1, serviceMs: 1, queueMs: 0 });
    await tick();
    expect(calls.get("a")!.signal.aborted).toBe(false); // c is still live
    set.abandon(c!, "decided", "decided");
    expect(calls.get("a")!.signal.aborted).toBe(true);
    await set.settled();
    expect(a!.result).toEqual({ kind: "abandoned", lostWorkMs: 1 });
    expect(b!.result?.kind).toBe("answer");
    expect(c!.result).toEqual({ kind: "abandoned", lostWorkMs: 1 });
  });

  it("aborts the shared signal when the last live branch on it answers after the others were abandoned", async () => {
    const { transport, calls } = heldTransport();
    const set = branchSet(transport);
    set.issue(["a", "b"]);
    set.abandon(set.branches[0]!, "decided", "decided");
    expect(calls.get("a")!.signal.aborted).toBe(false);
    calls.get("b")!.end({ kind: "answer", answer: 1, serviceMs: 1, queueMs: 0 });
    await tick();
    expect(calls.get("a")!.signal.aborted).toBe(true);
    await set.settled();
  });

  it("detaches a candidate while the shared branches are stopped, and refuses to detach a shared one", async () => {
    const { transport, calls } = heldTransport();
    const set = branchSet(transport);
    set.issue(["a", "b", "m"], (peer) => peer === "m");
    const [a, b, m] = set.branches;
    expect(set.detach(a!)).toBe(false);
    expect(set.detach(m!)).toBe(true);
    set.abandon(a!, "decided", "decided");
    set.abandon(b!, "decided", "decided");
    set.abandon(m!, "decided", "decided"); // a measurement branch is not abandoned by a settled decision
    expect(calls.get("a")!.signal.aborted).toBe(true);
    expect(calls.get("m")!.signal.aborted).toBe(false);
    await set.settledAttached();
    expect(set.unsettled).toBe(1);
    calls.get("m")!.end({ kind: "answer", answer: 1, serviceMs: 1, queueMs: 0 });
    await set.settled();
    expect(m!.measurement).toBe(true);
  });

  it("gives a later issue a fresh shared signal once the first one was stopped", () => {
    const { transport, calls } = heldTransport();
    const set = branchSet(transport);
    set.issue(["a"]);
    set.abandon(set.branches[0]!, "decided", "decided");
    set.issue(["b"]);
    expect(calls.get("a")!.signal.aborted).toBe(true);
    expect(calls.get("b")!.signal.aborted).toBe(false);
  });
});

describe("BranchSet shared signal and listeners", () => {
  it("lets a transport add a listener per branch to the shared signal without Node's leak warning", async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on("warning", onWarning);
    try {
      const { transport } = heldTransport();
      const set = branchSet(transport);
      set.issue(Array.from({ length: 40 }, (_, i) => `p${i}`));
      set.abandonOutstanding("done", "decided");
      await set.settled();
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain("MaxListenersExceededWarning");
    } finally {
      process.off("warning", onWarning);
    }
  });
});
