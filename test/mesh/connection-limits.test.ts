/** Per-client bounds on a real server on loopback: each closes the offending connection and reports. */
import * as http2 from "node:http2";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { AbandonRegistry } from "../../src/mesh/abandon-registry.js";
import { swarmService } from "../../src/mesh/proto.js";
import { startServer } from "./helpers.js";
import type { Started } from "./helpers.js";
import type { SwarmServerOptions } from "../../src/mesh/server.js";

const closed = (socket: Socket): Promise<number> => {
  const t0 = Date.now();
  return new Promise((resolve) => socket.once("close", () => resolve(Date.now() - t0)));
};

describe("connection limits", () => {
  let s: Started | undefined;
  const sockets: Socket[] = [];
  const reports: { limit: string; fields: Record<string, unknown> }[] = [];
  const start = async (connections: SwarmServerOptions["connections"]): Promise<Started> => {
    reports.length = 0;
    s = await startServer({ connections, onLimit: (limit, fields) => reports.push({ limit, fields }) });
    return s;
  };
  const raw = (port: number): Socket => {
    const socket = connect(port, "127.0.0.1");
    socket.on("error", () => undefined);
    socket.resume(); // a paused socket would never see the server's FIN
    sockets.push(socket);
    return socket;
  };
  afterEach(() => {
    for (const socket of sockets.splice(0)) socket.destroy();
    s?.server.forceClose();
    s = undefined;
  });

  it("connections beyond maxConnectionsPerAddress are closed on arrival, and reported", async () => {
    const { port } = await start({ maxConnectionsPerAddress: 3 });
    const held = [raw(port), raw(port), raw(port)];
    await Promise.all(held.map((h) => new Promise((r) => h.once("connect", r))));
    const extra = raw(port);
    expect(await closed(extra)).toBeLessThan(1_000);
    expect(reports.map((r) => r.limit)).toContain("maxConnectionsPerAddress");
    expect(held.every((h) => !h.destroyed)).toBe(true);
  });

  it("a socket that never says hello is closed after handshakeTimeoutMs", async () => {
    const { port } = await start({ handshakeTimeoutMs: 300 });
    const ms = await closed(raw(port));
    expect(ms).toBeGreaterThanOrEqual(250);
    expect(ms).toBeLessThan(2_000);
    expect(reports.map((r) => r.limit)).toEqual(["handshakeTimeoutMs"]);
  });

  it("an HTTP/2 connection with no call open is closed after idleTimeoutMs", async () => {
    const { address } = await start({ idleTimeoutMs: 1_000 });
    const session = http2.connect(`http://${address}`);
    session.on("error", () => undefined);
    const t0 = Date.now();
    await new Promise((resolve) => session.once("close", resolve));
    expect(Date.now() - t0).toBeLessThan(3_000);
    expect(reports.map((r) => r.limit)).toContain("idleTimeoutMs");
  });

  it("a client that never reads its replies is cut off at maxPendingSendBytes", async () => {
    const { address } = await start({ maxPendingSendBytes: 65_536 });
    const session = http2.connect(`http://${address}`, { settings: { initialWindowSize: 65_535 } });
    session.on("error", () => undefined);
    const m = swarmService().Branch;
    const payload = Buffer.from(JSON.stringify("x".repeat(200_000)));
    const body = m.requestSerialize({ kind: "echo", branchId: "b", payload });
    const frame = Buffer.alloc(5 + body.length);
    frame.writeUInt32BE(body.length, 1);
    body.copy(frame, 5);
    for (let i = 0; i < 4; i++) {
      const req = session.request({
        ":method": "POST",
        ":path": m.path,
        "content-type": "application/grpc",
        te: "trailers",
      });
      req.on("error", () => undefined);
      req.pause(); // never reads: the replies wait on the server
      req.end(frame);
    }
    await new Promise((resolve) => session.once("close", resolve));
    expect(reports.map((r) => r.limit)).toContain("maxPendingSendBytes");
  });
});

describe("abandon registry", () => {
  it("holds early abandons by bytes too: 30k ids of 16 KB stay under maxTombstoneBytes", () => {
    let dropped = 0;
    const r = new AbandonRegistry({ maxTombstoneBytes: 1024 * 1024, onEvict: (n) => (dropped += n) });
    const reason = new Error("x");
    for (let i = 0; i < 30_000; i++) r.abandon(`${i}:${"i".repeat(16_000)}`, reason, 0);
    expect(r.tombstoneBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(dropped).toBeGreaterThan(29_000);
    // The newest ids are still remembered: a late Branch with one is refused.
    expect(r.add(`29999:${"i".repeat(16_000)}`, new AbortController())).toBe(false);
  });
});
