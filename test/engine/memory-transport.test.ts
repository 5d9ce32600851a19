import { describe, expect, it } from "vitest";
import { sleep } from "../../src/clock/clock.js";
import { SimClock } from "../../src/clock/sim-clock.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import type { BranchRequest } from "../../src/engine/transport.js";
import { exponential } from "../../src/util/rng.js";

const request = (clock: SimClock, deadlineIn: number, id = "b1"): BranchRequest => ({
  fanoutId: "f1",
  branchId: id,
  task: { kind: "echo", payload: { hello: "world" } },
  origin: "test",
  hop: 0,
  deadline: clock.now() + deadlineIn,
});

describe("MemoryTransport", () => {
  it("answers after the sampled service time with the handler's value", async () => {
    const clock = new SimClock();
    const t = new MemoryTransport(clock).addPeer("a", { latency: 25 });
    const result = await clock.runUntilSettled(
      t.branch("a", request(clock, 100), { signal: new AbortController().signal }),
    );
    expect(result).toEqual({ kind: "answer", answer: { hello: "world" }, serviceMs: 25, queueMs: 0 });
    expect(t.stats("a")).toMatchObject({ answered: 1, workDoneMs: 25, workLostMs: 0, inFlight: 0 });
  });

  it("an abandoned branch reports the work the peer had done and stops the handler", async () => {
    const clock = new SimClock();
    let handlerSignal: AbortSignal | undefined;
    const t = new MemoryTransport(clock).addPeer("a", {
      handler: async (_task, ctx) => {
        handlerSignal = ctx.signal;
        await sleep(ctx.clock, 1000, ctx.signal);
        return "never";
      },
    });
    const controller = new AbortController();
    clock.setTimer(() => controller.abort(), 40);
    const result = await clock.runUntilSettled(
      t.branch("a", request(clock, 100), { signal: controller.signal }),
    );
    expect(result).toEqual({ kind: "abandoned", lostWorkMs: 40 });
    expect(handlerSignal?.aborted).toBe(true);
    expect(t.stats("a")).toMatchObject({ abandoned: 1, workLostMs: 40 });
  });

  it("the deadline ends a branch with the work lost until then; an answer exactly at the deadline is late", async () => {
    const clock = new SimClock();
    const t = new MemoryTransport(clock).addPeer("a", { latency: 100 });
    const result = await clock.runUntilSettled(
      t.branch("a", request(clock, 100), { signal: new AbortController().signal }),
    );
    expect(result).toEqual({ kind: "deadline", lostWorkMs: 100 });
  });

  it("queues beyond its concurrency; queue time is reported and is not lost work", async () => {
    const clock = new SimClock();
    const t = new MemoryTransport(clock).addPeer("a", { latency: 10, concurrency: 1 });
    const signal = new AbortController().signal;
    const first = t.branch("a", request(clock, 100, "1"), { signal });
    const second = t.branch("a", request(clock, 100, "2"), { signal });
    const third = new AbortController();
    const dropped = t.branch("a", request(clock, 100, "3"), { signal: third.signal });
    third.abort();
    const results = await clock.runUntilSettled(Promise.all([first, second, dropped]));
    expect(results[0]).toMatchObject({ kind: "answer", queueMs: 0, serviceMs: 10 });
    expect(results[1]).toMatchObject({ kind: "answer", queueMs: 10, serviceMs: 10 });
    expect(results[2]).toEqual({ kind: "abandoned", lostWorkMs: 0 });
    expect(clock.now()).toBe(20);
  });

  it("a handler error is a failed branch; a peer going down fails its branches in flight", async () => {
    const clock = new SimClock();
    const t = new MemoryTransport(clock)
      .addPeer("bad", {
        handler: () => {
          throw new Error("handler bug");
        },
      })
      .addPeer("a", { latency: 50 });
    const signal = new AbortController().signal;
    const failed = await clock.runUntilSettled(t.branch("bad", request(clock, 100), { signal }));
    expect(failed).toMatchObject({ kind: "failed", code: "PEER_ERROR", message: "handler bug" });
    const inFlight = t.branch("a", request(clock, 100), { signal });
    clock.setTimer(() => t.setDown("a", true), 20);
    expect(await clock.runUntilSettled(inFlight)).toMatchObject({ kind: "failed", code: "PEER_UNAVAILABLE" });
    expect(t.stats("a")).toMatchObject({ workLostMs: 20, failed: 1 });
    expect(await t.branch("nobody", request(clock, 100), { signal })).toMatchObject({
      code: "PEER_UNAVAILABLE",
    });
  });

  it("latency draws are reproducible from the seed", async () => {
    const run = async (seed: number): Promise<number[]> => {
      const clock = new SimClock();
      const t = new MemoryTransport(clock, { seed }).addPeer("a", { latency: (rng) => exponential(rng, 20) });
      const out: number[] = [];
      for (let i = 0; i < 5; i++) {
        const r = await clock.runUntilSettled(
          t.branch("a", request(clock, 1000), { signal: new AbortController().signal }),
        );
        if (r.kind === "answer") out.push(r.serviceMs);
      }
      return out;
    };
    const a = await run(7);
    expect(a).toHaveLength(5);
    expect(await run(7)).toEqual(a);
    expect(await run(8)).not.toEqual(a);
  });

  it("rejects bad peer options naming the field", () => {
    const t = new MemoryTransport(new SimClock());
    expect(() => t.addPeer("a", { latency: -1 })).toThrow(/latency/);
    expect(() => t.addPeer("a", { concurrency: 0 })).toThrow(/concurrency/);
    expect(() => t.setDown("zz", true)).toThrow(/registered peer/);
  });
});
