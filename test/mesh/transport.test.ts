import { afterEach, describe, expect, it } from "vitest";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { BranchRequest } from "../../src/engine/transport.js";
import { echo, sleeper, startServer, thrower, until } from "./helpers.js";
import type { Started } from "./helpers.js";

let n = 0;
function req(kind: string, payload: unknown, deadlineMs = 2_000): BranchRequest {
  return {
    fanoutId: "f1",
    branchId: `b${++n}`,
    task: { kind, payload },
    origin: "test",
    hop: 0,
    deadline: performance.timeOrigin + performance.now() + deadlineMs,
  };
}
const live = (): AbortSignal => new AbortController().signal;

describe("GrpcTransport against a real server", () => {
  const servers: Started[] = [];
  const transports: GrpcTransport[] = [];
  afterEach(() => {
    for (const t of transports.splice(0)) t.close();
    for (const s of servers.splice(0)) s.server.forceClose();
  });
  async function setup(handlers?: HandlerRegistry) {
    const s = await startServer({ handlers });
    servers.push(s);
    const t = new GrpcTransport();
    transports.push(t);
    return { s, t };
  }

  it("answers with the payload, service and queue time", async () => {
    const { s, t } = await setup();
    const r = await t.branch(s.address, req("echo", { x: [1, 2] }), { signal: live() });
    expect(r).toMatchObject({ kind: "answer", answer: { x: [1, 2] } });
    if (r.kind === "answer") {
      expect(r.serviceMs).toBeGreaterThanOrEqual(0);
      expect(r.queueMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("abandons without cancelling: the peer stops and reports the work it lost", async () => {
    let peerSignal: AbortSignal | undefined;
    const { s, t } = await setup(new HandlerRegistry([sleeper((ctx) => (peerSignal = ctx.signal))]));
    const ac = new AbortController();
    const p = t.branch(s.address, req("sleep", {}), { signal: ac.signal });
    await new Promise((r) => setTimeout(r, 60));
    ac.abort();
    const r = await p;
    expect(r.kind).toBe("abandoned");
    if (r.kind === "abandoned") expect(r.lostWorkMs).toBeGreaterThan(0);
    expect(peerSignal?.aborted).toBe(true);
    expect(t.hardCancels).toBe(0);
    expect(t.abandonStats(s.address).sent).toBe(1);
  });

  it("an abort in the same turn as the calls (before the abort listener is added) still abandons them", async () => {
    const { s, t } = await setup();
    const ac = new AbortController();
    const task = { kind: "sleep", payload: {} };
    const branches = [1, 2, 3].map((i) =>
      t.branch(s.address, { ...req("sleep", {}), branchId: `same-turn-${i}`, task }, { signal: ac.signal }),
    );
    ac.abort();
    const results = await Promise.all(branches);
    expect(results.map((r) => r.kind)).toEqual(["abandoned", "abandoned", "abandoned"]);
    expect(t.hardCancels).toBe(0);
    expect(t.abandonStats(s.address)).toEqual({ sent: 3, batches: 1 });
  });

  it("one signal across turns: a branch issued after the first ones settled is still abandoned", async () => {
    let peerSignal: AbortSignal | undefined;
    const { s, t } = await setup(new HandlerRegistry([echo, sleeper((ctx) => (peerSignal = ctx.signal))]));
    const ac = new AbortController();
    const first = await t.branch(s.address, req("echo", 1), { signal: ac.signal });
    expect(first.kind).toBe("answer");
    await new Promise((r) => setImmediate(r));
    const late = t.branch(s.address, req("sleep", {}), { signal: ac.signal });
    await until(() => peerSignal !== undefined);
    ac.abort();
    expect((await late).kind).toBe("abandoned");
    expect(peerSignal?.aborted).toBe(true);
  });

  it("the peer enforces the deadline itself and replies with its lost work", async () => {
    const { s, t } = await setup();
    const r = await t.branch(s.address, req("sleep", {}, 80), { signal: live() });
    expect(r.kind).toBe("deadline");
    if (r.kind === "deadline") expect(r.lostWorkMs).toBeGreaterThan(0);
  });

  it("maps an unknown kind and a handler error to failed with the message", async () => {
    const { s, t } = await setup();
    const r1 = await t.branch(s.address, req("nope", null), { signal: live() });
    expect(r1).toMatchObject({ kind: "failed", code: "NOT_FOUND" });
    if (r1.kind === "failed") expect(r1.message).toMatch(/"nope".*boom, echo, sleep/);
    const r2 = await t.branch(s.address, req("boom", null), { signal: live() });
    expect(r2).toMatchObject({ kind: "failed", code: "INTERNAL" });
    if (r2.kind === "failed") expect(r2.message).toMatch(/kaboom/);
    const r3 = await t.branch(s.address, req("echo", 7), { signal: live() });
    expect(r3).toMatchObject({ kind: "answer", answer: 7 });
  });

  it("an unreachable peer fails fast, a missing address fails at once", async () => {
    const t = new GrpcTransport({ addressOf: (p) => (p === "ghost" ? undefined : p) });
    transports.push(t);
    const r = await t.branch("127.0.0.1:1", req("echo", 1, 5_000), { signal: live() });
    expect(r).toMatchObject({ kind: "failed", code: "UNAVAILABLE" });
    const r2 = await t.branch("ghost", req("echo", 1), { signal: live() });
    expect(r2).toMatchObject({ kind: "failed", code: "UNAVAILABLE" });
  });

  it("already aborted or expired requests settle without a call", async () => {
    const t = new GrpcTransport();
    transports.push(t);
    const ac = new AbortController();
    ac.abort();
    expect(await t.branch("127.0.0.1:1", req("echo", 1), { signal: ac.signal })).toEqual({
      kind: "abandoned",
      lostWorkMs: 0,
    });
    expect(await t.branch("127.0.0.1:1", req("echo", 1, -5), { signal: live() })).toEqual({
      kind: "deadline",
      lostWorkMs: 0,
    });
  });

  it("a killed peer: the pending branch resolves, never hangs", async () => {
    const { s, t } = await setup(new HandlerRegistry([echo, sleeper(), thrower]));
    const p = t.branch(s.address, req("sleep", {}, 3_000), { signal: live() });
    await new Promise((r) => setTimeout(r, 50));
    s.server.forceClose();
    const r = await p;
    expect(["failed", "deadline"]).toContain(r.kind);
  });
});
