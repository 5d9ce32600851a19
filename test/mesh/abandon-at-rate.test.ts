/**
 * Abandoning at rate must keep the connection. Node's HTTP/2 closes a connection after ~1,000
 * RST_STREAMs in a burst (~33/s refill) and every call on it fails. GrpcTransport abandons by
 * sending branch ids on the per-peer Abandon stream instead: the peer stops the handler and the
 * pending call completes normally with ABANDONED. The second test shows raw `call.cancel()` at the
 * same rate does break the connection.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { BranchResult } from "../../src/engine/transport.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import { swarmService } from "../../src/mesh/proto.js";
import { echo, sleeper, startServer, until } from "./helpers.js";
import type { Started } from "./helpers.js";

const TOTAL = 5_000;
const BATCH = 100;
const now = (): number => performance.timeOrigin + performance.now();
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Calls `one` back to back until `stop()`; returns the outcomes. */
async function concurrentLoop<T>(one: () => Promise<T>, stop: () => boolean): Promise<T[]> {
  const out: T[] = [];
  while (!stop()) out.push(await one());
  return out;
}

describe("abandoning 5,000 branches to one peer", () => {
  let s: Started;
  beforeAll(async () => {
    s = await startServer({
      concurrency: 1024,
      maxQueue: 8192,
      handlers: new HandlerRegistry([echo, sleeper()]),
    });
  });
  afterAll(() => s.server.forceClose());

  it("GrpcTransport: every branch abandoned with its lost work, no concurrent call fails", async () => {
    // every call starts in the turn it is made (with the concurrent ones), so each is on the wire before its abort
    const t = new GrpcTransport({ sendBatch: TOTAL });
    let issuing = true;
    const concurrent = concurrentLoop(
      () =>
        t.branch(
          s.address,
          {
            fanoutId: "c",
            branchId: `c-${now()}`,
            task: { kind: "echo", payload: 1 },
            origin: "t",
            hop: 0,
            deadline: now() + 60_000,
          },
          { signal: new AbortController().signal },
        ),
      () => !issuing,
    );
    const started = now();
    const results: Promise<BranchResult>[] = [];
    for (let b = 0; b < TOTAL / BATCH; b++) {
      const controllers: AbortController[] = [];
      for (let i = 0; i < BATCH; i++) {
        const ac = new AbortController();
        controllers.push(ac);
        results.push(
          t.branch(
            s.address,
            {
              fanoutId: `f${b}`,
              branchId: `a-${b}-${i}`,
              task: { kind: "sleep", payload: {} },
              origin: "t",
              hop: 0,
              deadline: now() + 30_000,
            },
            { signal: ac.signal },
          ),
        );
      }
      await pause(5);
      for (const ac of controllers) ac.abort();
      await pause(5);
    }
    const settled = await Promise.all(results);
    const issueMs = now() - started;
    issuing = false;
    const others = await concurrent;
    const failedOthers = others.filter((r) => r.kind !== "answer");
    if (failedOthers.length > 0)
      console.log("concurrent calls that did not answer:", failedOthers.slice(0, 3));

    const kinds = new Map<string, number>();
    for (const r of settled) kinds.set(r.kind, (kinds.get(r.kind) ?? 0) + 1);
    console.log(
      `${TOTAL} abandons in ${issueMs.toFixed(0)} ms (${((TOTAL / issueMs) * 1000).toFixed(0)}/s), ` +
        `${t.abandonStats(s.address).batches} abandon batches, ${others.length} concurrent calls, ` +
        `hard cancels ${t.hardCancels}`,
    );
    expect(Object.fromEntries(kinds)).toEqual({ abandoned: TOTAL });
    // Hard cancels are a last resort (no reply 2 s after the abandon, e.g. on a starved machine),
    // and bounded by the per-peer RST budget (burst 50, 10/s): far below HTTP/2's 1,000 + 33/s.
    expect(t.hardCancels).toBeLessThanOrEqual(50 + (10 * issueMs) / 1000);
    expect(t.abandonStats(s.address).sent).toBe(TOTAL);
    expect(others.length).toBeGreaterThan(0);
    expect(others.filter((r) => r.kind !== "answer")).toEqual([]);
    // The same connection still serves, and the peer's work is really gone.
    await until(() => s.server.state().inFlight === 0);
    const after = await t.branch(
      s.address,
      {
        fanoutId: "z",
        branchId: "z",
        task: { kind: "echo", payload: "still here" },
        origin: "t",
        hop: 0,
        deadline: now() + 5_000,
      },
      { signal: new AbortController().signal },
    );
    expect(after).toMatchObject({ kind: "answer", answer: "still here" });
    t.close();
  }, 180_000);

  it("raw call.cancel() at the same rate makes HTTP/2 close the connection, failing calls that were not cancelled", async () => {
    const client = new grpc.Client(s.address, grpc.credentials.createInsecure());
    const m = swarmService().Branch;
    const call = (
      kind: string,
      id: string,
      cb: (e: grpc.ServiceError | null) => void,
    ): grpc.ClientUnaryCall =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        { kind, branchId: id, payload: Buffer.from("{}") },
        new grpc.Metadata(),
        { deadline: Date.now() + 30_000 },
        (e) => cb(e),
      );
    const failures: string[] = [];
    let broken = false;
    const concurrent = concurrentLoop(
      () =>
        new Promise<void>((resolve) =>
          call("echo", "c", (e) => {
            if (e) {
              failures.push(`${grpc.status[e.code]}: ${e.details}`);
              broken = true;
            }
            resolve();
          }),
        ),
      () => broken,
    );
    let cancelled = 0;
    for (let b = 0; b < TOTAL / BATCH && !broken; b++) {
      const calls = [];
      for (let i = 0; i < BATCH; i++) {
        calls.push(
          call("sleep", `r-${b}-${i}`, (e) => {
            // Calls still in flight when the session closes fail with INTERNAL.
            if (e && e.code !== grpc.status.CANCELLED) {
              failures.push(`${grpc.status[e.code]}: ${e.details}`);
              broken = true;
            }
          }),
        );
      }
      await pause(5);
      for (const c of calls) c.cancel();
      cancelled += BATCH;
      await pause(5);
    }
    broken = true;
    await concurrent;
    client.close();
    console.log(`raw cancel: connection broke after ${cancelled} cancels; first failure: ${failures[0]}`);
    expect(cancelled).toBeLessThan(TOTAL);
    expect(failures.length).toBeGreaterThan(0);
    // The session's end as the first concurrent call meets it: INTERNAL for a call in flight, or
    // UNAVAILABLE for one written to the session as it closes with HTTP/2's INTERNAL_ERROR (code 2).
    expect(failures[0]).toMatch(/^INTERNAL|^UNAVAILABLE: .*Session closed with error code 2/);
  }, 180_000);
});
