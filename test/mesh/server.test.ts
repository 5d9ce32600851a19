/** Bad input never takes the node down: each gets the right status and the node keeps serving. */
import * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { TaskHandler } from "../../src/mesh/handler.js";
import { swarmService } from "../../src/mesh/proto.js";
import type { SwarmMethod } from "../../src/mesh/proto.js";
import type { BranchReply__Output } from "../../src/mesh/gen/tailswarm/v1/BranchReply.js";
import { echo, sleeper, startServer, thrower, until } from "./helpers.js";
import type { Started } from "./helpers.js";

type Result<T> = { err: grpc.ServiceError | null; value: T | undefined };

describe("swarm server", () => {
  let s: Started;
  let client: grpc.Client;
  let ran = 0;
  const counted: TaskHandler = {
    kind: "counted",
    async handle() {
      ran++;
      return "ran";
    },
  };
  const unserialisable: TaskHandler = { kind: "bigint", handle: async () => 10n };

  function unary<K extends SwarmMethod>(
    method: K,
    request: unknown,
    deadline: number = Date.now() + 5_000,
    via: grpc.Client = client,
  ): Promise<Result<BranchReply__Output>> {
    const m = swarmService()[method];
    return new Promise((resolve) =>
      via.makeUnaryRequest(
        m.path,
        m.requestSerialize as (v: unknown) => Buffer,
        m.responseDeserialize as (b: Buffer) => BranchReply__Output,
        request,
        new grpc.Metadata(),
        { deadline },
        (err, value) => resolve({ err, value }),
      ),
    );
  }
  const echoOk = async (): Promise<void> => {
    const r = await unary("Branch", { kind: "echo", branchId: "ok", payload: Buffer.from('"hi"') });
    expect(r.err).toBeNull();
    expect(r.value?.status).toBe("BRANCH_STATUS_ANSWERED");
    expect(Buffer.from(r.value!.answer).toString()).toBe('"hi"');
  };

  beforeAll(async () => {
    s = await startServer({
      nodeId: "srv",
      region: "eu-1",
      maxPayloadBytes: 1024,
      concurrency: 1,
      maxQueue: 1,
      handlers: new HandlerRegistry([echo, sleeper(), thrower, counted, unserialisable]),
    });
    client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
    s.server.forceClose();
  });

  it("malformed JSON → INVALID_ARGUMENT naming the field", async () => {
    const r = await unary("Branch", { kind: "echo", branchId: "m", payload: Buffer.from("{nope") });
    expect(r.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r.err?.details).toMatch(/^payload: got "\{nope", expected UTF-8 JSON/);
    await echoOk();
  });

  it("oversized payload → INVALID_ARGUMENT with the size and the limit; far larger → RESOURCE_EXHAUSTED", async () => {
    const big = Buffer.from(JSON.stringify("x".repeat(2_000)));
    const r = await unary("Branch", { kind: "echo", branchId: "o", payload: big });
    expect(r.err?.code).toBe(grpc.status.INVALID_ARGUMENT);
    expect(r.err?.details).toMatch(/payload size: got 2002, expected at most 1024 bytes/);
    const huge = Buffer.from(JSON.stringify("x".repeat(100_000)));
    const r2 = await unary("Branch", { kind: "echo", branchId: "o2", payload: huge });
    expect(r2.err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    await echoOk();
  });

  it("unknown kind → NOT_FOUND naming the kind and the known kinds", async () => {
    const r = await unary("Branch", { kind: "nope", branchId: "u" });
    expect(r.err?.code).toBe(grpc.status.NOT_FOUND);
    expect(r.err?.details).toBe(
      'kind: got "nope", expected a kind node srv serves: bigint, boom, counted, echo, sleep',
    );
    await echoOk();
  });

  it("an expired deadline → DEADLINE_EXCEEDED without running the handler", async () => {
    const before = ran;
    // No gRPC deadline, the caller's absolute deadline already passed.
    const r1 = await unary(
      "Branch",
      { kind: "counted", branchId: "e1", deadlineUnixMs: Date.now() - 10 },
      Infinity,
    );
    expect(r1.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(r1.err?.details).toMatch(/^deadline: passed/);
    // A gRPC deadline shorter than the caller's own grace: logically expired on arrival.
    const r2 = await unary("Branch", { kind: "counted", branchId: "e2", deadlineGraceMs: 10_000 });
    expect(r2.err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(ran).toBe(before);
    await echoOk();
  });

  it("a throwing handler → INTERNAL with its message; an unserialisable answer too", async () => {
    const r = await unary("Branch", { kind: "boom", branchId: "t" });
    expect(r.err?.code).toBe(grpc.status.INTERNAL);
    expect(r.err?.details).toBe('handler "boom" failed on node srv: kaboom');
    const r2 = await unary("Branch", { kind: "bigint", branchId: "t2" });
    expect(r2.err?.code).toBe(grpc.status.INTERNAL);
    expect(r2.err?.details).toMatch(/answer of handler "bigint": got \d+, expected plain JSON data/);
    await echoOk();
  });

  it("queues beyond its concurrency (FIFO, real queue_ms), refuses beyond the queue, and reports load", async () => {
    const first = unary("Branch", { kind: "sleep", branchId: "q1", payload: Buffer.from('{"ms":300}') });
    await until(() => s.server.state().inFlight === 1);
    const second = unary("Branch", { kind: "echo", branchId: "q2", payload: Buffer.from("2") });
    await until(() => s.server.state().queueDepth === 1);
    const third = await unary("Branch", { kind: "echo", branchId: "q3" });
    expect(third.err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(third.err?.details).toMatch(/limit is 1 waiting/);
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.value?.status).toBe("BRANCH_STATUS_ANSWERED");
    expect(r1.value!.serviceMs).toBeGreaterThan(0);
    expect(r2.value?.status).toBe("BRANCH_STATUS_ANSWERED");
    // The second waited for the first to finish.
    expect(r2.value!.queueMs).toBeGreaterThan(0);
    expect(r2.value!.load).toMatchObject({ queueDepth: 0, inFlight: 1, capacity: 1 });
    await echoOk();
  });

  it("Probe and State say who the node is and when it started", async () => {
    const p = (await unary("Probe", { sentUnixMs: 42 })) as unknown as Result<Record<string, unknown>>;
    expect(p.value).toMatchObject({ sentUnixMs: 42, nodeId: "srv", startedAtUnixMs: s.server.startedAt });
    const st = (await unary("State", {})) as unknown as Result<Record<string, unknown>>;
    expect(st.value).toMatchObject({
      nodeId: "srv",
      region: "eu-1",
      capacity: 1,
      startedAtUnixMs: s.server.startedAt,
      kinds: ["bigint", "boom", "counted", "echo", "sleep"],
    });
  });

  it("serves grpc.health.v1 and reflection, and goes NOT_SERVING when asked", async () => {
    const def = protoLoader.loadSync(healthProtoPath, { keepCase: true, defaults: true, enums: String });
    const Health = grpc.loadPackageDefinition(def).grpc as unknown as {
      health: { v1: { Health: grpc.ServiceClientConstructor } };
    };
    const h = new Health.health.v1.Health(s.address, grpc.credentials.createInsecure());
    const check = (service: string): Promise<unknown> =>
      new Promise((resolve, reject) =>
        (h as unknown as { check: (r: unknown, cb: (e: unknown, v: unknown) => void) => void }).check(
          { service },
          (e, v) => (e ? reject(e) : resolve(v)),
        ),
      );
    expect(await check("")).toEqual({ status: "SERVING" });
    expect(await check("tailswarm.v1.Swarm")).toEqual({ status: "SERVING" });
    s.server.setServing(false);
    expect(await check("")).toEqual({ status: "NOT_SERVING" });
    s.server.setServing(true);
    h.close();

    const reflection = await new Promise<string[]>((resolve, reject) => {
      const stream = client.makeBidiStreamRequest(
        "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo",
        (v: Buffer) => v,
        (b: Buffer) => b,
        new grpc.Metadata(),
      );
      // ServerReflectionRequest { list_services: "" } = field 7, empty string.
      stream.write(Buffer.from([0x3a, 0x00]));
      stream.on("data", (b: Buffer) => {
        const text = b.toString("latin1");
        resolve(["tailswarm.v1.Swarm", "grpc.health.v1.Health"].filter((n) => text.includes(n)));
        stream.end();
      });
      stream.on("error", reject);
    });
    expect(reflection).toEqual(["tailswarm.v1.Swarm", "grpc.health.v1.Health"]);
  });

  it("close() drains in-flight work, then stops", async () => {
    const other = await startServer({ nodeId: "drain" });
    const c = new grpc.Client(other.address, grpc.credentials.createInsecure());
    const pending = unary(
      "Branch",
      { kind: "sleep", branchId: "d", payload: Buffer.from('{"ms":100}') },
      Date.now() + 5_000,
      c,
    ).then((r) => r.err);
    await until(() => other.server.state().inFlight === 1);
    const closing = other.server.close(5_000);
    // While it drains, a probe learns it is leaving: peers stop counting it as up.
    const probe = await unary("Probe", { sentUnixMs: 1 }, Date.now() + 5_000, c);
    expect(probe.err).toMatchObject({ code: grpc.status.UNAVAILABLE, details: "draining" });
    expect(await closing).toBe(true);
    expect(await pending).toBeNull();
    c.close();
  });

  it("a forceClose() during close()'s drain ends it at once and close() reports not drained", async () => {
    const other = await startServer({ nodeId: "forced" });
    const c = new grpc.Client(other.address, grpc.credentials.createInsecure());
    const pending = unary(
      "Branch",
      { kind: "sleep", branchId: "f", payload: Buffer.from("{}") },
      Date.now() + 60_000,
      c,
    ).then((r) => r.err);
    await until(() => other.server.state().inFlight === 1);
    const closing = other.server.close(60_000);
    await new Promise((r) => setTimeout(r, 50));
    const t0 = Date.now();
    other.server.forceClose();
    // The handler was aborted, so nothing is busy any more: that must not read as a drain.
    expect(await closing).toBe(false);
    expect(Date.now() - t0).toBeLessThan(1_000);
    await pending;
    c.close();
  });
});
