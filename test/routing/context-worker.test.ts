import { describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { createContextWorker, parseContextWorkerOptions } from "../../src/peers/context-worker.js";
import type { ContextAnswer } from "../../src/peers/context-worker.js";
import { contextSignature } from "../../src/routing/context-task.js";

function ctx(signal = new AbortController().signal) {
  return { signal, deadline: Infinity, fanoutId: "f", hop: 0, origin: "c" };
}

function worker(options: Record<string, unknown> = {}) {
  const clock = new SimClock({ start: 0 });
  const w = createContextWorker(parseContextWorkerOptions(options, "handlers[0].options"), "p1", clock);
  return { clock, w };
}

describe("context worker", () => {
  it("a miss costs K units and creates the object; the next request for it is a 1-unit hit", async () => {
    const { clock, w } = worker({ capacity: 1, unitMs: 10, missFactor: 4, verifyOnHit: 0, verifyOnMiss: 0 });
    const task = { kind: "context", payload: { requestClass: "rag", context: "c1" } };
    const first = (await clock.runUntilSettled(w.handle(task, ctx()))) as ContextAnswer;
    expect(first).toMatchObject({ hit: false, work: 4, downstream: 0 });
    expect(clock.now()).toBe(40);
    expect(w.memory.has(contextSignature("rag", "c1"))).toBe(true);
    const second = (await clock.runUntilSettled(w.handle(task, ctx()))) as ContextAnswer;
    expect(second).toMatchObject({ hit: true, work: 1 });
    expect(clock.now()).toBe(50);
    expect(w.routingState()).toMatchObject({ served: 2, hits: 1, churn: 1, memoryUsed: 1 });
  });

  it("the verifier stage follows memory: created on every miss and never on a hit when so configured", async () => {
    const { clock, w } = worker({ capacity: 1, unitMs: 1, verifyOnHit: 0, verifyOnMiss: 1, verifyWork: 3 });
    const task = { kind: "context", payload: { requestClass: "agent", context: "x" } };
    const miss = (await clock.runUntilSettled(w.handle(task, ctx()))) as ContextAnswer;
    const hit = (await clock.runUntilSettled(w.handle(task, ctx()))) as ContextAnswer;
    expect(miss).toMatchObject({ hit: false, downstream: 1, work: 4 + 3, stageWork: 4 });
    expect(hit).toMatchObject({ hit: true, downstream: 0, work: 1, stageWork: 1 });
  });

  it("advertises jobs per queue key while they wait, and refuses beyond maxBacklog", async () => {
    const { clock, w } = worker({ capacity: 1, unitMs: 10, maxBacklog: 3, verifyOnMiss: 0 });
    const t = (c: string) => ({ kind: "context", payload: { requestClass: "rag", context: c } });
    const running = [w.handle(t("a"), ctx()), w.handle(t("b"), ctx()), w.handle(t("c"), ctx())];
    await clock.flush();
    expect(w.routingState().queues).toEqual({ "rag/0": 3 });
    await expect(w.handle(t("d"), ctx())).rejects.toMatchObject({ code: "RESOURCE_EXHAUSTED" });
    await clock.runUntilSettled(Promise.all(running));
    expect(w.routingState().queues).toEqual({});
  });

  it("keeps memory within its budget; marginal value keeps the object in demand, LRU the newest", async () => {
    const run = async (retention: string) => {
      const { clock, w } = worker({
        capacity: 1,
        unitMs: 1,
        memoryBudget: 2,
        verifyOnMiss: 0,
        holdingCost: 0,
        retention,
      });
      const t = (c: string) => ({ kind: "context", payload: { requestClass: "rag", context: c } });
      for (let i = 0; i < 5; i++) await clock.runUntilSettled(w.handle(t("hot"), ctx()));
      for (const c of ["a", "b", "c"]) await clock.runUntilSettled(w.handle(t(c), ctx()));
      expect(w.memory.used).toBeLessThanOrEqual(2);
      return w.memory.has(contextSignature("rag", "hot"));
    };
    expect(await run("marginal-value")).toBe(true);
    expect(await run("lru")).toBe(false);
  });

  it("an abandoned job leaves the queue", async () => {
    const { clock, w } = worker({ capacity: 1, unitMs: 10, verifyOnMiss: 0 });
    const t = (c: string) => ({ kind: "context", payload: { requestClass: "rag", context: c } });
    const first = w.handle(t("a"), ctx());
    const ac = new AbortController();
    const second = w.handle(t("b"), ctx(ac.signal));
    await clock.flush();
    expect(w.routingState().queues["rag/0"]).toBe(2);
    ac.abort(new Error("abandoned"));
    await expect(second).rejects.toThrow("abandoned");
    expect(w.routingState().queues["rag/0"]).toBe(1);
    await clock.runUntilSettled(first);
  });

  it("rejects bad options and payloads naming the field", async () => {
    expect(() => parseContextWorkerOptions({ retention: "fifo" }, "h.options")).toThrow(
      /h\.options\.retention/,
    );
    expect(() => parseContextWorkerOptions({ capacity: 0 }, "h.options")).toThrow(/h\.options\.capacity/);
    const { w } = worker();
    await expect(w.handle({ kind: "context", payload: { context: "x" } }, ctx())).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });
});
