/** A fan-out to many peers starts its calls at most `sendBatch` per turn of the event loop, and says what they cost. */
import { afterEach, describe, expect, it } from "vitest";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import type { BranchResult } from "../../src/engine/transport.js";
import { startServer } from "./helpers.js";
import type { Started } from "./helpers.js";

describe("GrpcTransport sends in batches", () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0).reverse()) c();
  });

  it("starts 200 branches 64 per turn, every one answered; a branch aborted before its turn is not sent", async () => {
    const s: Started = await startServer({ nodeId: "p" });
    cleanup.push(() => s.server.forceClose());
    const t = new GrpcTransport({ sendBatch: 64 });
    cleanup.push(() => t.close());
    const task = { kind: "echo", payload: { x: 1 } };
    const ac = new AbortController();
    const calls: Promise<BranchResult>[] = [];
    for (let i = 0; i < 200; i++) {
      calls.push(
        t.branch(
          s.address,
          { fanoutId: "f", branchId: `b${i}`, task, origin: "t", hop: 0, deadline: Date.now() + 10_000 },
          { signal: ac.signal },
        ),
      );
    }
    const last = new AbortController();
    const dropped = t.branch(
      s.address,
      { fanoutId: "g", branchId: "late", task, origin: "t", hop: 0, deadline: Date.now() + 10_000 },
      { signal: last.signal },
    );
    await Promise.resolve(); // the first batch leaves in the microtask after the loop
    expect(t.sendStats().branches).toBe(64);
    last.abort();
    const results = await Promise.all(calls);
    expect(results.every((r) => r.kind === "answer")).toBe(true);
    expect(await dropped).toEqual({ kind: "abandoned", lostWorkMs: 0 });
    const stats = t.sendStats();
    expect(stats.branches).toBe(200);
    expect(stats.batches).toBe(4); // 64 + 64 + 64 + 8
    // the thread's CPU clock can be coarser than four short batches (it read 0 for them on a fast
    // machine): counted, not necessarily above zero; the scale bench reads it over hundreds of branches
    expect(Number.isFinite(stats.cpuMicros) && stats.cpuMicros >= 0).toBe(true);
  });
});
