import { describe, expect, it } from "vitest";
import type { FanoutOptions } from "../../src/engine/options.js";
import type { FanoutObserver } from "../../src/engine/outcome.js";
import type { BranchResult, PeerTransport } from "../../src/engine/transport.js";
import { TailswarmError } from "../../src/errors.js";
import { collectModel, harness, recordOf, START } from "./harness.js";

const task = { kind: "echo", payload: null };

describe("Coordinator.fanOut — caller abort", () => {
  it("cancels every branch and the continuation, and rejects with ABORTED", async () => {
    const h = harness();
    for (const p of ["a", "b"]) {
      h.warm(p, 10);
      h.transport.addPeer(p, { latency: 80, handler: () => p });
    }
    const controller = new AbortController();
    h.clock.setTimer(() => controller.abort(new Error("user left")), 30);
    let continuationSignal: AbortSignal | undefined;
    const run = h.coordinator.fanOut(task, {
      peers: ["a", "b"],
      budgetMs: 200,
      model: collectModel(),
      signal: controller.signal,
      continuation: (signal) => {
        continuationSignal = signal;
        return new Promise(() => undefined);
      },
    });
    await expect(h.clock.runUntilSettled(run)).rejects.toMatchObject({ code: "ABORTED" });
    expect(h.clock.now()).toBe(START + 30);
    expect(continuationSignal?.aborted).toBe(true);
    for (const p of ["a", "b"])
      expect(h.transport.stats(p)).toMatchObject({ abandoned: 1, workLostMs: 30, inFlight: 0 });
    expect(h.seen.branches.map((b) => b.record.outcome)).toEqual(["abandoned", "abandoned"]);
    expect(h.seen.ends).toHaveLength(0);
  });

  it("an already aborted signal rejects at once and issues nothing", async () => {
    const h = harness();
    h.transport.addPeer("a", { latency: 10 });
    const run = h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: 100,
      model: collectModel(),
      signal: AbortSignal.abort(),
    });
    await expect(run).rejects.toMatchObject({ code: "ABORTED" });
    expect(h.transport.stats("a").branches).toBe(0);
  });
});

describe("Coordinator.fanOut — peers and transports that misbehave", () => {
  it("a peer that refuses fails its branch and the fan-out goes on", async () => {
    const h = harness();
    for (const p of ["a", "b"]) {
      h.warm(p, 10);
      h.transport.addPeer(p, { latency: 10, handler: () => p });
    }
    h.transport.setDown("b", true);
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(recordOf(outcome, "b")).toMatchObject({
      outcome: "failed",
      result: { kind: "failed", code: "PEER_UNAVAILABLE" },
    });
    expect(outcome.action).toBe("a");
    expect(outcome.elapsedMs).toBe(10);
  });

  it("a peer that swallows calls cannot hold the fan-out past its deadline", async () => {
    const h = harness();
    for (const p of ["a", "b"]) {
      h.warm(p, 10);
      h.transport.addPeer(p, { latency: 10, handler: () => p });
    }
    h.transport.setDown("b", true, "blackhole");
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(outcome.elapsedMs).toBe(100);
    expect(recordOf(outcome, "b")).toMatchObject({ outcome: "abandoned", lostWorkMs: 0 });
    expect(outcome.action).toBe("a");
  });

  it("a transport that never settles: the fan-out resolves by its deadline and the books close later", async () => {
    const never: PeerTransport = { branch: () => new Promise<BranchResult>(() => undefined) };
    const h = harness({ transport: never, coordinator: { settleGraceMs: 5, settleTimeoutMs: 1000 } });
    h.warm("a", 10);
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 100, model: collectModel(), fallback: () => "x" }),
    );
    expect(outcome.elapsedMs).toBe(105);
    expect(recordOf(outcome, "a")).toMatchObject({ outcome: "abandoned", unsettled: true });
    expect(h.seen.branches).toHaveLength(0);
    await h.clock.runUntilIdle();
    expect(h.clock.now()).toBe(START + 1100);
    expect(h.seen.branches[0]?.record).toMatchObject({
      outcome: "failed",
      result: { code: "TRANSPORT_NO_SETTLE" },
    });
    expect(h.book.estimate("a", h.clock.now()).censored).toBe(0);
  });

  it("a transport that throws or rejects is a failed branch, not a failed fan-out", async () => {
    const bad: PeerTransport = {
      branch: (peer) => {
        if (peer === "a") throw new Error("boom");
        return Promise.reject(new Error("nope"));
      },
    };
    const h = harness({ transport: bad });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(outcome.branches.map((b) => [b.outcome, b.result.kind === "failed" ? b.result.code : ""])).toEqual(
      [
        ["failed", "TRANSPORT_ERROR"],
        ["failed", "TRANSPORT_ERROR"],
      ],
    );
    expect(outcome.elapsedMs).toBe(0);
  });

  it("an answer the model rejects is a failed branch", async () => {
    const h = harness();
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => 42 });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 100, model: collectModel() }),
    );
    expect(recordOf(outcome, "a")).toMatchObject({ outcome: "failed", result: { code: "INVALID_ANSWER" } });
  });
});

describe("Coordinator.fanOut — observer", () => {
  it("sees the decision, every branch end and the outcome", async () => {
    const h = harness();
    for (const p of ["a", "b"]) h.warm(p, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 300, handler: () => "b" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model: collectModel() }),
    );
    expect(h.seen.decisions).toHaveLength(1);
    expect(h.seen.decisions[0]).toMatchObject({
      fanoutId: outcome.fanoutId,
      classification: outcome.classification,
    });
    expect(h.seen.branches.map((b) => [b.record.peer, b.record.outcome])).toEqual([
      ["a", "committed"],
      ["b", "abandoned"],
    ]);
    expect(h.seen.branches.every((b) => b.fanoutId === outcome.fanoutId)).toBe(true);
    expect(h.seen.ends).toEqual([outcome]);
    expect(h.seen.errors).toEqual([]);
  });

  it("an observer that throws never breaks the fan-out; errors go to onError", async () => {
    const errors: unknown[] = [];
    const boom = (): never => {
      throw new Error("observer bug");
    };
    const observer: FanoutObserver = {
      onDecision: boom,
      onBranchEnd: boom,
      onFanoutEnd: boom,
      onViolation: boom,
      onError: (e) => {
        errors.push(e);
        throw new Error("and onError too");
      },
    };
    const h = harness({ coordinator: { observer } });
    h.warm("a", 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    const outcome = await h.clock.runUntilSettled(
      h.coordinator.fanOut(task, { peers: ["a"], budgetMs: 100, model: collectModel() }),
    );
    expect(outcome.action).toBe("a");
    expect(errors).toHaveLength(3);
    const degraded = await h.coordinator.fanOut(task, {
      peers: ["a"],
      budgetMs: -1,
      model: collectModel(),
      fallback: () => "local",
    });
    expect(degraded.action).toBe("local");
  });
});

describe("Coordinator.fanOut — invalid options", () => {
  const h = harness();
  const model = collectModel();
  const cases: Array<[string, Record<string, unknown>]> = [
    ["peers", { peers: [], budgetMs: 10 }],
    ["peers", { peers: ["a", "a"], budgetMs: 10 }],
    ["k", { peers: ["a"], k: 2, budgetMs: 10 }],
    ["required.k", { peers: ["a"], required: { kind: "quorum", k: 0 }, budgetMs: 10 }],
    ["deadline", { peers: ["a"] }],
    ["deadline", { peers: ["a"], deadline: 5, budgetMs: 5 }],
    ["reserveMs", { peers: ["a"], budgetMs: 10, reserveMs: -1 }],
    ["policy", { peers: ["a"], budgetMs: 10, policy: "yolo" }],
    ["fallback", { peers: ["a"], budgetMs: 10, fallback: "cached" }],
  ];
  it.each(cases)("names the option %s", async (field, options) => {
    const bad = { model, ...options } as unknown as FanoutOptions<string, string>;
    const run = h.coordinator.fanOut(task, bad);
    await expect(run).rejects.toBeInstanceOf(TailswarmError);
    await expect(run).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining(`option ${field}`) as unknown,
    });
  });

  it("names a bad task kind", async () => {
    await expect(
      h.coordinator.fanOut({ kind: "", payload: null }, { peers: ["a"], budgetMs: 10, model }),
    ).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("task.kind") as unknown,
    });
  });
});

describe("Coordinator.fanOut — a decision model that throws", () => {
  it("abandons the branches and rejects with the model's error", async () => {
    const h = harness();
    for (const p of ["a", "b"]) h.warm(p, 10);
    h.transport.addPeer("a", { latency: 10, handler: () => "a" });
    h.transport.addPeer("b", { latency: 50, handler: () => "b" });
    const base = collectModel();
    const model = {
      ...base,
      canFlip: (answers: ReadonlyMap<string, string>, outstanding: readonly string[]): boolean => {
        if (answers.size > 0) throw new Error("model bug");
        return base.canFlip(answers, outstanding);
      },
    };
    await expect(
      h.clock.runUntilSettled(h.coordinator.fanOut(task, { peers: ["a", "b"], budgetMs: 100, model })),
    ).rejects.toThrow("model bug");
    expect(h.transport.stats("b")).toMatchObject({ abandoned: 1, workLostMs: 10, inFlight: 0 });
    expect(h.clock.pending).toBe(0);
  });
});
