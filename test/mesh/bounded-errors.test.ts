/**
 * Hostile input gets a bounded, named error: undecodable protobuf, a missing request message, JSON
 * nested past the limit (in a request and in a peer's answer), request text echoed into errors, and a
 * deadline beyond Node's timer range.
 */
import * as http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DETAILS_CHARS, MAX_ECHO_CHARS } from "../../src/errors.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { TaskHandler } from "../../src/mesh/handler.js";
import { swarmService } from "../../src/mesh/proto.js";
import type { SwarmMethod } from "../../src/mesh/proto.js";
import { echo, startServer } from "./helpers.js";
import type { Started } from "./helpers.js";

const deep = (n: number): Buffer => Buffer.from("[".repeat(n) + "]".repeat(n));

describe("bounded errors", () => {
  let s: Started;
  let client: grpc.Client;
  const warnings: string[] = [];
  const onWarning = (w: Error): void => void warnings.push(w.name);
  const huge: TaskHandler = {
    kind: "huge",
    handle: async (task) => {
      throw new Error(`no: ${"x".repeat((task.payload as number) ?? 10)}`);
    },
  };
  const deepAnswer: TaskHandler = { kind: "deep", handle: async () => JSON.parse(deep(100).toString()) };

  function unary(
    method: SwarmMethod,
    request: unknown,
    deadline = Date.now() + 5_000,
  ): Promise<{ err: grpc.ServiceError | null; value: { status?: string } | undefined; ms: number }> {
    const m = swarmService()[method];
    const t0 = Date.now();
    return new Promise((resolve) =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize as (v: unknown) => Buffer,
        m.responseDeserialize as (b: Buffer) => { status?: string },
        request,
        new grpc.Metadata(),
        { deadline },
        (err, value) => resolve({ err, value, ms: Date.now() - t0 }),
      ),
    );
  }

  beforeAll(async () => {
    process.on("warning", onWarning);
    s = await startServer({
      nodeId: "srv",
      handlers: new HandlerRegistry([echo, huge, deepAnswer]),
      coordinate: async () => {
        throw new Error("unreachable");
      },
    });
    client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    process.off("warning", onWarning);
    client.close();
    s.server.forceClose();
  });

  it("bytes that are not a protobuf message → INVALID_ARGUMENT naming the method", async () => {
    const r = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        "/tailswarm.v1.Swarm/Branch",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
        new grpc.Metadata(),
        { deadline: Date.now() + 5_000 },
        (err) => resolve(err),
      ),
    );
    expect(r?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r?.details).toMatch(/^request \(\/tailswarm\.v1\.Swarm\/Branch\): got 5 bytes that do not decode/);
  });

  it("a unary call that ends without a message → INVALID_ARGUMENT, not UNIMPLEMENTED", async () => {
    const session = http2.connect(`http://${s.address}`);
    try {
      const req = session.request({
        ":method": "POST",
        ":path": "/tailswarm.v1.Swarm/Probe",
        "content-type": "application/grpc",
        te: "trailers",
      });
      req.end();
      const trailers = await new Promise<http2.IncomingHttpHeaders>((resolve, reject) => {
        req.on("trailers", resolve);
        req.on("response", (h) => {
          if (h["grpc-status"] !== undefined) resolve(h);
        });
        req.on("error", reject);
        req.resume();
      });
      expect(Number(trailers["grpc-status"])).toBe(grpc.status.INVALID_ARGUMENT);
      expect(decodeURIComponent(String(trailers["grpc-message"]))).toMatch(
        /got no message, expected exactly one/,
      );
    } finally {
      session.close();
    }
  });

  it("JSON nested past maxJsonDepth → INVALID_ARGUMENT with the depth, on Branch and Coordinate", async () => {
    for (const method of ["Branch", "Coordinate"] as const) {
      const r = await unary(method, { kind: "echo", branchId: "d", payload: deep(400_000) });
      expect(r.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
      expect(r.err?.details).toBe("payload depth: got 400000, expected at most 64 nested arrays and objects");
    }
    const ok = await unary("Branch", { kind: "echo", branchId: "ok", payload: deep(64) });
    expect(ok.value?.status).toBe("BRANCH_STATUS_ANSWERED");
  });

  it("a peer's answer nested past the limit fails that branch, naming the peer", async () => {
    const t = new GrpcTransport();
    try {
      const r = await t.branch(
        s.address,
        {
          fanoutId: "f",
          branchId: "b",
          task: { kind: "deep", payload: null },
          origin: "me",
          hop: 0,
          deadline: Date.now() + 2_000,
        },
        { signal: new AbortController().signal },
      );
      expect(r).toMatchObject({ kind: "failed", code: "MALFORMED_ANSWER" });
      expect((r as { message: string }).message).toBe(
        `answer from peer ${s.address} depth: got 100, expected at most 64 nested arrays and objects`,
      );
    } finally {
      t.close();
    }
  });

  it("a 100 KB kind or branch id is echoed cut, with its length; a huge handler error is bounded", async () => {
    const kind = "k".repeat(100_000);
    const r = await unary("Branch", { kind, branchId: "b" });
    expect(r.err?.code).toBe(grpc.status.NOT_FOUND);
    expect(r.err?.details).toContain("… (100002 chars)");
    expect(r.err!.details.length).toBeLessThan(MAX_ECHO_CHARS + 200);
    const late = await unary(
      "Branch",
      { kind: "echo", branchId: "i".repeat(100_000), deadlineUnixMs: 1 },
      Date.now() - 1,
    );
    expect(late.err?.details.length ?? 0).toBeLessThan(MAX_DETAILS_CHARS + 40);
    const h = await unary("Branch", { kind: "huge", branchId: "h", payload: Buffer.from("200000") });
    expect(h.err?.code).toBe(grpc.status.INTERNAL);
    expect(h.err!.details.length).toBeLessThanOrEqual(MAX_DETAILS_CHARS + 20);
    expect(h.err?.details).toMatch(/… \(\d+ chars\)$/);
  });

  it("a 30-day deadline is cut to maxDeadlineMs: the branch runs, and no timer warning is printed", async () => {
    const month = Date.now() + 30 * 86_400_000;
    const r = await unary("Branch", { kind: "echo", branchId: "m", deadlineUnixMs: month }, month);
    expect(r.err).toBeNull();
    expect(r.value?.status).toBe("BRANCH_STATUS_ANSWERED");
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((w) => /Timeout/.test(w))).toEqual([]);
  });
});
