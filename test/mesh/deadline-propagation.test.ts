/**
 * Three hops on real servers: root (a GrpcTransport) → mid (a handler that fans out further with its
 * own GrpcTransport, using its context's deadline and signal) → leaf. The leaf sees a shrinking
 * deadline, and stops work when the root gives up — by abandoning, by its deadline passing, or by
 * cancelling the call outright.
 */
import * as http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { HandlerContext, TaskHandler } from "../../src/mesh/handler.js";
import { swarmService } from "../../src/mesh/proto.js";
import type { CoordinateFn } from "../../src/mesh/coordinate.js";
import { grpcFrame, rawUnary } from "../support/raw-grpc.js";
import { startServer, until } from "./helpers.js";
import type { Started } from "./helpers.js";

const RESERVE = 20;
const now = (): number => performance.timeOrigin + performance.now();

interface Seen {
  ctx: HandlerContext;
  stoppedAt?: number;
  reason?: unknown;
}

describe("deadline propagation and cancellation across three hops", () => {
  let leaf: Started;
  let mid: Started;
  let midTransport: GrpcTransport;
  const leafSeen: Seen[] = [];
  const midSeen: HandlerContext[] = [];
  let coordinateCtx: { budgetMs: number; deadline: number } | undefined;
  let coordinateCalls = 0;

  const hold: TaskHandler = {
    kind: "hold",
    handle(_task, ctx) {
      const seen: Seen = { ctx };
      leafSeen.push(seen);
      return new Promise((_resolve, reject) => {
        ctx.signal.addEventListener("abort", () => {
          seen.stoppedAt = now();
          seen.reason = ctx.signal.reason;
          reject(ctx.signal.reason);
        });
      });
    },
  };
  const quick: TaskHandler = {
    kind: "quick",
    async handle(_task, ctx) {
      return { deadline: ctx.deadline };
    },
  };
  const relay: TaskHandler = {
    kind: "relay",
    async handle(task, ctx) {
      midSeen.push(ctx);
      const r = await midTransport.branch(
        leaf.address,
        {
          fanoutId: ctx.fanoutId,
          branchId: `${ctx.fanoutId}/leaf`,
          task: { kind: "hold", payload: task.payload },
          origin: "mid",
          hop: ctx.hop + 1,
          deadline: ctx.deadline,
        },
        { signal: ctx.signal },
      );
      // Out of time below: say so with the status (the root maps DEADLINE_EXCEEDED to `deadline`).
      if (r.kind === "deadline") throw new TailswarmError("DEADLINE_EXCEEDED", "leaf ran out of time");
      return r;
    },
  };
  const coordinate: CoordinateFn = async (req, ctx) => {
    coordinateCalls++;
    coordinateCtx = { budgetMs: ctx.budgetMs, deadline: ctx.deadline };
    const r = await midTransport.branch(
      leaf.address,
      {
        fanoutId: "co",
        branchId: `co-${coordinateCalls}`,
        task: req.task,
        origin: "mid",
        hop: 0,
        deadline: ctx.deadline,
      },
      { signal: ctx.signal },
    );
    return {
      action: r.kind === "answer" ? r.answer : r.kind,
      mode: "synchronous",
      reason: "budget-between-p50-and-p99-plus-abandon-cost",
      fanoutId: "co",
      fanoutP50Ms: 1,
      fanoutP99Ms: 2,
      budgetMs: ctx.budgetMs,
      committed: 0,
      abandoned: 0,
      failed: 0,
      late: 0,
      degraded: false,
      decisionChanged: false,
      elapsedMs: 0,
      abandonCostMs: 0,
    };
  };

  beforeAll(async () => {
    leaf = await startServer({
      nodeId: "leaf",
      deadlineReserveMs: RESERVE,
      handlers: new HandlerRegistry([hold, quick]),
    });
    mid = await startServer({
      nodeId: "mid",
      deadlineReserveMs: RESERVE,
      handlers: new HandlerRegistry([relay]),
      coordinate,
    });
    midTransport = new GrpcTransport();
  });
  afterAll(() => {
    midTransport.close();
    mid.server.forceClose();
    leaf.server.forceClose();
  });

  it("the root abandons: the leaf's signal fires, the deadline shrank at every hop, lost work comes back", async () => {
    const root = new GrpcTransport();
    const ac = new AbortController();
    const rootDeadline = now() + 3_000;
    const before = leafSeen.length;
    const p = root.branch(
      mid.address,
      {
        fanoutId: "f1",
        branchId: "f1/mid",
        task: { kind: "relay", payload: null },
        origin: "root",
        hop: 0,
        deadline: rootDeadline,
      },
      { signal: ac.signal },
    );
    await until(() => leafSeen.length > before);
    const seen = leafSeen[leafSeen.length - 1]!;
    const midCtx = midSeen[midSeen.length - 1]!;
    ac.abort();
    const r = await p;
    root.close();

    expect(r.kind).toBe("abandoned");
    if (r.kind === "abandoned") expect(r.lostWorkMs).toBeGreaterThan(0);
    await until(() => seen.stoppedAt !== undefined);
    expect(TailswarmError.is(seen.reason, "ABORTED")).toBe(true);
    expect(midCtx.hop).toBe(0);
    expect(seen.ctx.hop).toBe(1);
    expect(seen.ctx.origin).toBe("mid");
    // Each hop keeps its reserve (grpc-timeout has 1 ms resolution, hence the slack).
    expect(midCtx.deadline).toBeLessThanOrEqual(rootDeadline - RESERVE + 2);
    expect(seen.ctx.deadline).toBeLessThanOrEqual(midCtx.deadline - RESERVE + 2);
    expect(seen.ctx.deadline).toBeLessThan(midCtx.deadline);
  });

  it("the root's deadline passes: the leaf stops at its (earlier) deadline, the root gets `deadline`", async () => {
    const root = new GrpcTransport();
    const before = leafSeen.length;
    const rootDeadline = now() + 400;
    const r = await root.branch(
      mid.address,
      {
        fanoutId: "f2",
        branchId: "f2/mid",
        task: { kind: "relay", payload: null },
        origin: "root",
        hop: 0,
        deadline: rootDeadline,
      },
      { signal: new AbortController().signal },
    );
    root.close();
    expect(r.kind).toBe("deadline");
    const seen = leafSeen[before]!;
    await until(() => seen.stoppedAt !== undefined);
    expect(TailswarmError.is(seen.reason, "DEADLINE_EXCEEDED")).toBe(true);
    expect(seen.ctx.deadline).toBeLessThan(rootDeadline - RESERVE);
  });

  it("cancelling the incoming call cancels the subtree", async () => {
    const client = new grpc.Client(mid.address, grpc.credentials.createInsecure());
    const m = swarmService().Branch;
    const before = leafSeen.length;
    let code: number | undefined;
    const call = client.makeUnaryRequest(
      m.path,
      m.requestSerialize,
      m.responseDeserialize,
      { kind: "relay", branchId: "f3/mid", fanoutId: "f3", payload: Buffer.alloc(0) },
      new grpc.Metadata(),
      { deadline: Date.now() + 5_000 },
      (e) => (code = e?.code),
    );
    await until(() => leafSeen.length > before);
    call.cancel();
    const seen = leafSeen[before]!;
    await until(() => seen.stoppedAt !== undefined);
    expect(TailswarmError.is(seen.reason, "ABORTED")).toBe(true);
    await until(() => code !== undefined);
    expect(code).toBe(grpc.status.CANCELLED);
    client.close();
  });

  it("Coordinate gets the incoming deadline minus the reserve as its budget, and fans out within it", async () => {
    const client = new grpc.Client(mid.address, grpc.credentials.createInsecure());
    const m = swarmService().Coordinate;
    // Warm the connection: a relative gRPC timeout is stretched by connection setup, which the
    // node's reserve is not meant to absorb.
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(Date.now() + 5_000, (e) => (e ? reject(e) : resolve())),
    );
    const reply = await new Promise<{ err: grpc.ServiceError | null; value: unknown }>((resolve) =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { kind: "quick", payload: Buffer.alloc(0) },
        new grpc.Metadata(),
        { deadline: Date.now() + 5_000 },
        (err, value) => resolve({ err, value }),
      ),
    );
    expect(reply.err).toBeNull();
    expect(reply.value).toMatchObject({ nodeId: "mid", mode: "synchronous" });
    const action = JSON.parse(Buffer.from((reply.value as { action: Buffer }).action).toString()) as {
      deadline: number;
    };
    expect(coordinateCtx!.budgetMs).toBeLessThanOrEqual(5_000 - RESERVE + 2);
    expect(coordinateCtx!.budgetMs).toBeGreaterThan(0);
    // The leaf's deadline is the coordinator's minus the leaf's own reserve.
    expect(action.deadline).toBeLessThanOrEqual(coordinateCtx!.deadline - RESERVE + 2);

    const short = (leftMs: number): Promise<grpc.ServiceError | null> =>
      new Promise((resolve) =>
        client.makeUnaryRequest(
          m.path,
          m.requestSerialize,
          m.responseDeserialize,
          { kind: "hold" },
          new grpc.Metadata(),
          { deadline: Date.now() + leftMs },
          (err) => resolve(err),
        ),
      );
    // Less time left than the reserve the node wants: the call still runs (the reserve kept is at most
    // replyReserveMaxShare of it), but with no budget, so the node degrades at once (a degrade needs no wait).
    let calls = coordinateCalls;
    await short(RESERVE / 2);
    expect(coordinateCalls).toBe(calls + 1);
    expect(coordinateCtx!.budgetMs).toBe(0);
    // No time past the reserve's floor (replyReserveMinMs, 1 ms): DEADLINE_EXCEEDED without the callback.
    // The call is sent with 0.5 ms left (grpc-timeout 500u), as a client deadline of Date.now() + 1 may
    // still show the node a hair over 1 ms once rounded into the header.
    calls = coordinateCalls;
    const session = http2.connect(`http://${mid.address}`);
    session.on("error", () => undefined);
    const frame = grpcFrame(m.requestSerialize({ kind: "hold" }));
    const under = await rawUnary(session, m.path, frame, {
      giveUpMs: 5_000,
      headers: { "grpc-timeout": "500u" },
    });
    session.close();
    expect(under.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(coordinateCalls).toBe(calls);
    client.close();
  });
});
