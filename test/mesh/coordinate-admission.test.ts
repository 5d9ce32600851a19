/**
 * Admission control of Coordinate on a real server on loopback: calls past the limit and queue are
 * RESOURCE_EXHAUSTED at once with a retry hint, a queued call whose deadline passes is refused so and never run,
 * and health reads NOT_SERVING while the node sheds, SERVING again after the hold.
 */
import * as http2 from "node:http2";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swarmService } from "../../src/mesh/proto.js";
import { grpcFrame, rawUnary } from "../support/raw-grpc.js";
import { startServer } from "./helpers.js";
import type { Started } from "./helpers.js";

const HOLD_MS = 300;

/** A raw Coordinate stream on `session`: its headers sent, its request not (errors ignored). */
function rawCoordinateStream(session: http2.ClientHttp2Session, timeout: string): http2.ClientHttp2Stream {
  const req = session.request({
    ":method": "POST",
    ":path": swarmService().Coordinate.path,
    "content-type": "application/grpc",
    te: "trailers",
    "grpc-timeout": timeout,
  });
  req.on("error", () => undefined);
  return req;
}

describe("Coordinate admission", () => {
  let s: Started;
  let client: grpc.Client;
  let started = 0;
  const limits: string[] = [];
  const release: (() => void)[] = [];

  function coordinate(
    deadlineMs = 5_000,
  ): Promise<{ err: grpc.ServiceError | null; trailer: grpc.Metadata | undefined; ms: number }> {
    const m = swarmService().Coordinate;
    const t0 = Date.now();
    let trailer: grpc.Metadata | undefined;
    return new Promise((resolve) => {
      const call = client.makeUnaryRequest(
        m.path,
        m.requestSerialize as (v: unknown) => Buffer,
        m.responseDeserialize as (b: Buffer) => unknown,
        { kind: "vote", payload: Buffer.from("{}"), required: 1 },
        new grpc.Metadata(),
        { deadline: Date.now() + deadlineMs },
        (err) => resolve({ err, trailer: trailer ?? err?.metadata, ms: Date.now() - t0 }),
      );
      call.on("status", (st) => (trailer = st.metadata));
    });
  }

  /** Four calls, two running and two queued: release the two, then the two that take their slots. */
  async function finishFour(running: readonly Promise<unknown>[]): Promise<void> {
    expect(started).toBe(2);
    for (const r of release.splice(0)) r();
    for (let i = 0; i < 100 && started < 4; i++) await new Promise((r) => setTimeout(r, 20));
    for (const r of release.splice(0)) r();
    await Promise.all(running);
  }

  function health(): Promise<number> {
    return new Promise((resolve, reject) =>
      client.makeUnaryRequest(
        "/grpc.health.v1.Health/Check",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.alloc(0),
        new grpc.Metadata(),
        { deadline: Date.now() + 2_000 },
        // HealthCheckResponse { status = 1 }: 0x08 then the enum (1 SERVING, 2 NOT_SERVING).
        (err, value) => (err ? reject(err) : resolve(value?.[1] ?? 0)),
      ),
    );
  }

  beforeAll(async () => {
    s = await startServer({
      nodeId: "coord",
      coordinateAdmission: { maxConcurrent: 2, maxQueue: 2, shedHoldMs: HOLD_MS },
      onLimit: (limit) => void limits.push(limit),
      coordinate: (_request, ctx) => {
        started++;
        return new Promise((resolve, reject) => {
          release.push(() => reject(new Error("released")));
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true });
        });
      },
    });
    client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
    s.server.forceClose();
  });

  it("a queued call whose deadline passes is refused RESOURCE_EXHAUSTED in time and never runs", async () => {
    const running = [coordinate(5_000), coordinate(5_000)];
    // the client's first calls also connect: wait for them to run rather than a fixed time
    for (let i = 0; i < 100 && started < 2; i++) await new Promise((r) => setTimeout(r, 20));
    expect(started).toBe(2);
    // Nothing is known of service times yet, so the wait is not predicted: the call queues. A raw
    // HTTP/2 call: no client-side deadline to race the node's answer.
    const session = http2.connect(`http://${s.address}`);
    session.on("error", () => undefined);
    try {
      const frame = grpcFrame(
        swarmService().Coordinate.requestSerialize({ kind: "vote", payload: Buffer.from("{}"), required: 1 }),
      );
      const queued = await rawUnary(session, swarmService().Coordinate.path, frame, {
        timeoutMs: 300,
        giveUpMs: 2_000,
      });
      expect(queued.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(queued.details).toMatch(/^coordinate: deadline came after \d+ ms queued .*; not started$/);
      expect(Number(queued.headers["grpc-retry-pushback-ms"])).toBeGreaterThan(0);
      // refused at the work deadline (the call's less the reply reserve); a busy loop's timers run a few
      // ms late, and the status is what shows it was not the call's own deadline
      expect(queued.ms).toBeLessThanOrEqual(350);
    } finally {
      session.destroy();
    }
    expect(started).toBe(2);
    for (const r of release.splice(0)) r();
    await Promise.all(running);
    // the refusal made the node shed: the next test starts from SERVING
    await new Promise((r) => setTimeout(r, HOLD_MS + 200));
  });

  it("over the limit and queue → RESOURCE_EXHAUSTED within 1 s with grpc-retry-pushback-ms; health flips", async () => {
    started = 0;
    expect(await health()).toBe(1);
    const calls = Array.from({ length: 10 }, () => coordinate(5_000));
    // 2 run, 2 wait, 6 are refused at once.
    const refused: Awaited<(typeof calls)[number]>[] = [];
    const settled = await Promise.race([
      Promise.all(calls.slice(4)),
      new Promise<never>((_, reject) => setTimeout(() => reject(new Error("refusals took > 1 s")), 1_000)),
    ]);
    refused.push(...settled);
    for (const r of refused) {
      expect(r.err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      // Refused on their metadata: the first four were let in and had not reached the handler yet.
      expect(r.err?.details).toMatch(
        /^coordinate: \d running, \d queued, \d arriving; limit is 2 running and 2 waiting \(coordinate\.maxQueue\)$/,
      );
      expect(r.ms).toBeLessThan(1_000);
      expect(Number(r.trailer?.get("grpc-retry-pushback-ms")[0])).toBeGreaterThan(0);
    }
    expect(started).toBe(2);
    expect(limits).toContain("coordinate.maxQueue");
    expect(await health()).toBe(2);
    for (const r of release.splice(0)) r();
    // The two queued calls run once slots free; release them too.
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(4);
    for (const r of release.splice(0)) r();
    await Promise.all(calls.slice(0, 4));
    await new Promise((r) => setTimeout(r, HOLD_MS + 200));
    expect(await health()).toBe(1);
  });

  it("calls let in on their metadata and then refused or cancelled hold no place", async () => {
    started = 0;
    const junk = (): Promise<grpc.ServiceError | null> =>
      new Promise((resolve) =>
        client.makeUnaryRequest(
          swarmService().Coordinate.path,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
          new grpc.Metadata(),
          { deadline: Date.now() + 5_000 },
          (err) => resolve(err),
        ),
      );
    // one after another: each is let in on its metadata, then refused as undecodable
    for (let i = 0; i < 10; i++) expect((await junk())?.code).toBe(grpc.status.INVALID_ARGUMENT);
    // one that runs and is stopped at its deadline
    expect((await coordinate(30)).err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    started = 0;
    // 2 slots and 2 places in the queue: all four are free again.
    const running = [coordinate(5_000), coordinate(5_000), coordinate(5_000), coordinate(5_000)];
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(2);
    for (const r of release.splice(0)) r();
    await new Promise((r) => setTimeout(r, 100));
    expect(started).toBe(4);
    for (const r of release.splice(0)) r();
    for (const r of await Promise.all(running)) expect(r.err?.code).not.toBe(grpc.status.RESOURCE_EXHAUSTED);
  });

  it("Coordinates that send their headers but never their request hold no place", async () => {
    started = 0;
    const session = http2.connect(`http://${s.address}`);
    session.on("error", () => undefined);
    try {
      for (let i = 0; i < 10; i++) rawCoordinateStream(session, "60S");
      await new Promise((r) => setTimeout(r, 100));
      const running = [coordinate(5_000), coordinate(5_000)];
      await new Promise((r) => setTimeout(r, 100));
      expect(started).toBe(2);
      for (const r of release.splice(0)) r();
      await Promise.all(running);
    } finally {
      session.destroy();
    }
  });

  it("while shedding, what the headers show is judged first; a body is never read", async () => {
    started = 0;
    const running = [coordinate(5_000), coordinate(5_000), coordinate(5_000), coordinate(5_000)];
    for (let i = 0; i < 100 && started < 2; i++) await new Promise((r) => setTimeout(r, 20));
    const session = http2.connect(`http://${s.address}`);
    session.on("error", () => undefined);
    try {
      const junk = grpcFrame(Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]));
      const path = swarmService().Coordinate.path;
      // a grpc-timeout out of the spec's form is refused ahead of admission, named, even one grpc-js
      // would read (`5000 m`) and so escape the cap on deadlines
      for (const value of ["soon", "5000 m", "123456789m"]) {
        const badTimeout = await rawUnary(session, path, junk, {
          giveUpMs: 1_000,
          headers: { "grpc-timeout": value },
        });
        expect(badTimeout.code, value).toBe(grpc.status.INVALID_ARGUMENT);
        expect(badTimeout.details).toBe(
          `grpc-timeout: got ${JSON.stringify(value)} (from request header), expected 1 to 8 digits and a unit (H, M, S, m, u or n), such as 250m`,
        );
      }
      // an undecodable body is refused with the rest: reading it would cost what shedding saves
      const badBody = await rawUnary(session, path, junk, { giveUpMs: 1_000, timeoutMs: 5_000 });
      expect(badBody.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(Number(badBody.headers["grpc-retry-pushback-ms"])).toBeGreaterThan(0);
    } finally {
      session.destroy();
    }
    await finishFour(running);
  });

  it("a call refused while its request is still being sent reads its status, and its stream ends", async () => {
    started = 0;
    const running = [coordinate(5_000), coordinate(5_000), coordinate(5_000), coordinate(5_000)];
    for (let i = 0; i < 100 && started < 2; i++) await new Promise((r) => setTimeout(r, 20));
    // grpc-js: 900 KB of request, past HTTP/2's 64 KiB initial window, so the client is still sending
    // when the refusal comes: it must read RESOURCE_EXHAUSTED, not CANCELLED or INTERNAL
    const big = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        swarmService().Coordinate.path,
        swarmService().Coordinate.requestSerialize as (v: unknown) => Buffer,
        (b: Buffer) => b,
        { kind: "vote", payload: Buffer.from(JSON.stringify({ pad: "x".repeat(900_000) })), required: 1 },
        new grpc.Metadata(),
        { deadline: Date.now() + 5_000 },
        (err) => resolve(err),
      ),
    );
    expect(big?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(big?.details).toMatch(/limit is 2 running and 2 waiting \(coordinate\.maxQueue\)$/);
    expect(Number(big?.metadata.get("grpc-retry-pushback-ms")[0])).toBeGreaterThan(0);
    // a raw client that sends half a request and never ends it: the status, then the node ends the
    // stream (RST_STREAM NO_ERROR: stop sending), not left open until the client gives up
    const session = http2.connect(`http://${s.address}`);
    session.on("error", () => undefined);
    try {
      const req = rawCoordinateStream(session, "5S");
      req.write(Buffer.from([0, 0, 0, 1, 0]));
      const t0 = Date.now();
      const [status, rstCode] = await Promise.all([
        new Promise<string | string[] | undefined>((r) => req.once("response", (h) => r(h["grpc-status"]))),
        new Promise<number>((r) => req.once("close", () => r(req.rstCode))),
      ]);
      expect(status).toBe(String(grpc.status.RESOURCE_EXHAUSTED));
      expect(rstCode).toBe(http2.constants.NGHTTP2_NO_ERROR);
      expect(Date.now() - t0).toBeLessThan(1_000);
    } finally {
      session.destroy();
    }
    await finishFour(running);
  });

  it("a call whose predicted wait is past its deadline is refused on arrival", async () => {
    // The calls before held their slots ~hundreds of ms: that is the service time now known.
    started = 0;
    const running = [coordinate(5_000), coordinate(5_000)];
    await new Promise((r) => setTimeout(r, 100));
    const short = await coordinate(20);
    expect(short.err?.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(short.err?.details).toMatch(
      /predicted wait \d+ ms .* and service \d+ ms are past the \d+ ms left to the deadline/,
    );
    expect(started).toBe(2);
    for (const r of release.splice(0)) r();
    await Promise.all(running);
  });
});
