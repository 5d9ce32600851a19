/**
 * The header gate's cut of a call's `grpc-timeout` by the read stall, driven on a plain HTTP/2 server
 * whose "stream" listener stands in for grpc-js: a gated call's timeout reaches both admission and the
 * listener shortened by `readStallMs`, a stall under 1 ms or an absent timeout is left alone, and an
 * ungated call is not cut.
 */
import * as http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { Admission } from "../../src/mesh/admission.js";
import { admitOnHeaders } from "../../src/mesh/header-admission.js";
import { LimitLog } from "../../src/mesh/limit-log.js";
import { grpcFrame, rawUnary } from "../support/raw-grpc.js";

const GATED = "/t.S/Gated";
const OTHER = "/t.S/Other";

/**
 * One slot, taken, with a mean service time of 400 ms: a call arriving waits a predicted 400 ms and is
 * served by 800 ms, so it is admitted with 1,000 ms left and refused with 700 ms.
 */
function busyAdmission(): Admission {
  const a = new Admission({
    what: "t",
    limits: { maxConcurrent: 1, maxQueue: 10, shedHoldMs: 0 },
    clock: new SimClock(),
    log: new LimitLog(undefined),
    onShedding: () => undefined,
  });
  const signal = new AbortController().signal;
  expect(a.acquire(signal, 10_000)).toBe(true);
  a.release(400);
  expect(a.acquire(signal, 10_000)).toBe(true);
  return a;
}

describe("header gate: the read-stall cut", () => {
  let server: http2.Http2Server | undefined;
  let session: http2.ClientHttp2Session | undefined;
  afterEach(async () => {
    session?.destroy();
    await new Promise((r) => server?.close(r));
  });

  /** A server gated on GATED with `stallMs` as the read stall; returns the timeouts its listener saw. */
  async function serve(stallMs: number): Promise<{ seen: (string | undefined)[] }> {
    const seen: (string | undefined)[] = [];
    server = http2.createServer();
    // grpc-js's listener, moved behind the gate: answers OK with the timeout it was given
    server.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      seen.push(headers["grpc-timeout"] as string | undefined);
      stream.respond(
        { ":status": 200, "content-type": "application/grpc", "grpc-status": "0" },
        { endStream: true },
      );
    });
    admitOnHeaders(server, [{ path: GATED, admission: busyAdmission(), open: () => true }], {
      readStallMs: () => stallMs,
    });
    await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
    session = http2.connect(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    session.on("error", () => undefined);
    return { seen };
  }

  const call = (path: string, timeoutMs?: number) =>
    rawUnary(session!, path, grpcFrame(new Uint8Array()), {
      giveUpMs: 2_000,
      ...(timeoutMs !== undefined && { timeoutMs }),
    });

  it("shortens a gated call's timeout by the stall, for admission and for grpc-js", async () => {
    const { seen } = await serve(300);
    // 1,000 ms cut to 700: past the predicted wait plus service (800 ms), refused on its headers
    const refused = await call(GATED, 1_000);
    expect(refused.code).toBe(8); // RESOURCE_EXHAUSTED
    expect(refused.details).toMatch(/^t: predicted wait 400 ms .* past the 700 ms left to the deadline$/);
    expect(seen).toEqual([]);
    // 2,000 ms cut to 1,700: admitted, and grpc-js reads the cut timeout
    expect((await call(GATED, 2_000)).code).toBe(0);
    expect(seen).toEqual(["1700m"]);
    // an ungated call keeps its timeout; a call without one has none to cut
    expect((await call(OTHER, 1_000)).code).toBe(0);
    expect((await call(GATED)).code).toBe(0);
    expect(seen).toEqual(["1700m", "1000m", undefined]);
  });

  it("leaves the timeout alone on a loop that has not stalled (under 1 ms)", async () => {
    const { seen } = await serve(0.6);
    // 1,000 ms left: admitted (800 ms fits), uncut
    expect((await call(GATED, 1_000)).code).toBe(0);
    expect(seen).toEqual(["1000m"]);
  });
});
