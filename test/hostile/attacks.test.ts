/**
 * The hostile-client suite: each attack of docs/security.md against a real node process on loopback
 * (with a peer process, so that Coordinate fans out), bounded in count and time. Each asserts that the
 * node is alive and answers after it, that what is over a limit gets the documented status (or its
 * connection closed) within 1 s, that an honest client's calls during the attack succeed at ≥ 95% of
 * their rate without it (measured first, in the same test), and that the node's RSS grows ≤ 64 MB.
 *
 * Attackers come from their own loopback addresses (127.0.0.x), so a per-address limit they reach is
 * theirs; the honest client calls from 127.0.0.1 on a connection opened before the attack.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type * as http2 from "node:http2";
import { connect } from "node:net";
import type { Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MAX_DETAILS_CHARS } from "../../src/errors.js";
import { swarmService } from "../../src/mesh/proto.js";
import { NodeClient } from "../../src/node/client.js";
import type { SwarmMethod } from "../../src/mesh/proto.js";
import { killAll, spawnNode } from "../node/helpers/spawn-node.js";
import type { RunningNode } from "../node/helpers/spawn-node.js";
import { grpcFrame, GAVE_UP, rawUnary } from "../support/raw-grpc.js";
import type { RawStatus } from "../support/raw-grpc.js";
import { atMost, connectFrom, session, underAttack } from "./harness.js";
import type { Outcome } from "./harness.js";
import { streamFlood } from "./h2-flood.js";

/** Calls an attacker keeps open at once on one connection (more are refused by HTTP/2). */
const STREAMS = 32;
const OK = 0;
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const RESOURCE_EXHAUSTED = 8;

/** The target node's limits: small, so that each attack reaches them in a bounded number of steps. */
const LIMITS = {
  maxConnections: 120,
  maxConnectionsPerAddress: 40,
  maxConcurrentStreams: 32,
  handshakeTimeoutMs: 500,
  idleTimeoutMs: 1_000,
  maxPendingSendBytes: 65_536,
  maxAbandonBytes: 1_048_576,
  coordinateMaxConcurrent: 8,
  coordinateMaxQueue: 16,
};

const dir = mkdtempSync(join(tmpdir(), "tailswarm-hostile-"));
let peer: RunningNode | undefined;
let node: RunningNode | undefined;
const target = (): { address: string; pid: number } => ({ address: node!.address, pid: node!.child.pid! });

const frameOf = (method: SwarmMethod, request: unknown): Buffer =>
  grpcFrame((swarmService()[method].requestSerialize as (value: unknown) => Buffer)(request));

function call(
  s: http2.ClientHttp2Session,
  method: SwarmMethod,
  frame: Buffer,
  timeoutMs = 5_000,
): Promise<RawStatus> {
  return rawUnary(s, swarmService()[method].path, frame, { timeoutMs, giveUpMs: timeoutMs + 2_000 });
}

/** The outcome every attack shares: the node lives and answers, honest rate ≥ 95%, RSS ≤ 64 MB more. */
async function expectHeld(outcome: Outcome<unknown>): Promise<void> {
  expect(node!.child.exitCode).toBeNull();
  const s = await session(node!.address);
  try {
    expect((await call(s, "Probe", frameOf("Probe", { sentUnixMs: 1 }))).code).toBe(OK);
  } finally {
    s.close();
  }
  expect(outcome.baseline).toBeGreaterThan(0);
  expect(outcome.during).toBeGreaterThanOrEqual(0.95 * outcome.baseline);
  expect(outcome.rssGrowthMiB).toBeLessThanOrEqual(64);
}

/** Resolves with ms from now to `socket`'s close. */
const closedIn = (socket: Socket | http2.ClientHttp2Session): Promise<number> => {
  const t0 = Date.now();
  return new Promise((resolve) => socket.once("close", () => resolve(Date.now() - t0)));
};

const limitLogged = (limit: string): Promise<unknown> =>
  node!.waitForLog((l) => l.msg === "limit reached" && l.limit === limit, 5_000);

beforeAll(async () => {
  writeFileSync(
    join(dir, "peer.yaml"),
    [
      "nodeId: peer",
      "listen: 127.0.0.1:0",
      "handlers:",
      "  - { kind: echo, use: echo }",
      "  - kind: vote",
      "    use: synthetic",
      "    options: { seed: 1, body: { medianMs: 100, sigma: 0.1 }, wrap: { use: vote } }",
      "",
    ].join("\n"),
  );
  peer = await spawnNode(["--config", join(dir, "peer.yaml")]);
  node = await spawnNode([
    "--node-id",
    "target",
    "--listen",
    "127.0.0.1:0",
    "--peers",
    peer.address,
    "--probe-interval-ms",
    "500",
    "--connections-max-connections",
    String(LIMITS.maxConnections),
    "--connections-max-connections-per-address",
    String(LIMITS.maxConnectionsPerAddress),
    "--connections-max-concurrent-streams",
    String(LIMITS.maxConcurrentStreams),
    "--connections-handshake-timeout-ms",
    String(LIMITS.handshakeTimeoutMs),
    "--connections-idle-timeout-ms",
    String(LIMITS.idleTimeoutMs),
    "--connections-max-pending-send-bytes",
    String(LIMITS.maxPendingSendBytes),
    "--max-abandon-bytes",
    String(LIMITS.maxAbandonBytes),
    "--coordinate-max-concurrent",
    String(LIMITS.coordinateMaxConcurrent),
    "--coordinate-max-queue",
    String(LIMITS.coordinateMaxQueue),
  ]);
  // Coordinate needs its peer up.
  const status = new NodeClient(node.address);
  try {
    for (let i = 0; i < 100 && (await status.status()).peers.filter((p) => p.up).length < 1; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
  } finally {
    status.close();
  }
}, 90_000);

afterAll(async () => {
  await killAll([node, peer]);
  rmSync(dir, { recursive: true, force: true });
});

describe("a node under hostile clients", () => {
  it("oversized echoed fields: each refused within 1 s with bounded details", async () => {
    const big = "x".repeat(100_000);
    const frames: [SwarmMethod, Buffer][] = [
      ["Branch", frameOf("Branch", { kind: big, branchId: "b", origin: "a" })],
      ["Coordinate", frameOf("Coordinate", { kind: "vote", payload: Buffer.from("{}"), policy: big })],
      ["Coordinate", frameOf("Coordinate", { kind: "vote", payload: Buffer.from("{}"), decision: big })],
      ["Coordinate", frameOf("Coordinate", { kind: big, payload: Buffer.from("{}") })],
      [
        "Coordinate",
        frameOf("Coordinate", {
          kind: "vote",
          payload: Buffer.from("{}"),
          options: Buffer.from(JSON.stringify({ [big]: 1 })),
        }),
      ],
    ];
    const outcome = await underAttack(target(), async () => {
      const s = await session(node!.address, "127.0.0.2");
      try {
        // within Coordinate's limit and queue: what is tested here is the echo, not admission
        return await atMost(50, LIMITS.coordinateMaxConcurrent, (i) => {
          const [m, f] = frames[i % frames.length]!;
          return call(s, m, f).then((r) => ({ ...r, method: m, i }));
        });
      } finally {
        s.close();
      }
    });
    for (const r of outcome.result) {
      expect(r.ms).toBeLessThan(1_000);
      expect(r.details.length).toBeLessThanOrEqual(MAX_DETAILS_CHARS);
      // Branch's unknown kind, Coordinate's policy and decision are refused naming the field, cut.
      // A Coordinate of an unknown kind is fanned out: the peers' NOT_FOUND, or RESOURCE_EXHAUSTED
      // past admission; its details are bounded too.
      if (r.i % frames.length < 3) {
        expect([INVALID_ARGUMENT, NOT_FOUND]).toContain(r.code);
        expect(r.details).toMatch(/… \(10000\d chars\)/);
      }
    }
    // "I do not serve this kind" is no failure of the peer: the peer stays in the node's fan-outs
    expect(node!.stderr()).not.toMatch(/peer ejected/);
    await expectHeld(outcome);
  });

  it("malformed protobuf: INVALID_ARGUMENT within 1 s on every method", async () => {
    const methods: SwarmMethod[] = ["Branch", "Coordinate", "Probe", "Abandon", "State"];
    const outcome = await underAttack(target(), async () => {
      const s = await session(node!.address, "127.0.0.2");
      try {
        return await atMost(200, STREAMS, (i) => {
          // a field number of 2^31 and more: never a valid message, whatever follows
          const junk = Buffer.concat([Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]), Buffer.alloc(i % 50, i)]);
          return call(s, methods[i % methods.length]!, grpcFrame(junk));
        });
      } finally {
        s.close();
      }
    });
    for (const r of outcome.result) {
      expect(r.code).toBe(INVALID_ARGUMENT);
      expect(r.details).toMatch(/bytes that do not decode/);
      expect(r.ms).toBeLessThan(1_000);
    }
    await expectHeld(outcome);
  });

  it("over-deep JSON: INVALID_ARGUMENT naming the depth within 1 s", async () => {
    const deep = Buffer.from("[".repeat(400_000) + "]".repeat(400_000));
    const outcome = await underAttack(target(), async () => {
      const s = await session(node!.address, "127.0.0.2");
      try {
        const all: Promise<RawStatus>[] = [];
        for (let i = 0; i < 5; i++) {
          all.push(call(s, "Branch", frameOf("Branch", { kind: "echo", branchId: `d${i}`, payload: deep })));
          all.push(call(s, "Coordinate", frameOf("Coordinate", { kind: "vote", payload: deep })));
        }
        return await Promise.all(all);
      } finally {
        s.close();
      }
    });
    for (const r of outcome.result) {
      expect(r.code).toBe(INVALID_ARGUMENT);
      expect(r.details).toMatch(/^payload depth: got 400000, expected at most 64/);
      expect(r.ms).toBeLessThan(1_000);
    }
    await expectHeld(outcome);
  });

  it("absurd deadlines: cut to maxDeadlineMs, answered, no timer warning", async () => {
    const month = Date.now() + 30 * 86_400_000;
    const frame = frameOf("Branch", {
      kind: "echo",
      branchId: "m",
      payload: Buffer.from("1"),
      deadlineUnixMs: month,
    });
    const outcome = await underAttack(target(), async () => {
      const s = await session(node!.address, "127.0.0.2");
      try {
        // 99,999,999 hours: the longest grpc-timeout there is
        return await atMost(50, STREAMS, () =>
          rawUnary(s, swarmService().Branch.path, frame, {
            giveUpMs: 5_000,
            headers: { "grpc-timeout": "99999999H" },
          }),
        );
      } finally {
        s.close();
      }
    });
    for (const r of outcome.result) {
      expect(r.code).toBe(OK);
      expect(r.ms).toBeLessThan(1_000);
    }
    expect(node!.stderr()).not.toMatch(/TimeoutOverflowWarning/);
    await expectHeld(outcome);
  });

  it("a connection flood from one address: those past maxConnectionsPerAddress closed within 1 s", async () => {
    const outcome = await underAttack(target(), async () => {
      const sockets = Array.from({ length: LIMITS.maxConnectionsPerAddress + 30 }, () =>
        connectFrom(node!.address, "127.0.0.3"),
      );
      const closed = await Promise.all(
        sockets.map((s) =>
          Promise.race([closedIn(s), new Promise<number>((r) => setTimeout(() => r(Infinity), 800))]),
        ),
      );
      for (const s of sockets) s.destroy();
      return closed;
    });
    // The first maxConnectionsPerAddress stay (until idle); the rest are closed on arrival.
    expect(outcome.result.filter((ms) => ms < 1_000).length).toBeGreaterThanOrEqual(30);
    await limitLogged("maxConnectionsPerAddress");
    await expectHeld(outcome);
  });

  it("a connection flood from many addresses: those past maxConnections closed within 1 s", async () => {
    const outcome = await underAttack(target(), async () => {
      const sockets: http2.ClientHttp2Session[] = [];
      for (const host of ["127.0.0.4", "127.0.0.5", "127.0.0.6", "127.0.0.7"]) {
        for (let i = 0; i < LIMITS.maxConnectionsPerAddress; i++) {
          sockets.push(connectFrom(node!.address, host));
        }
      }
      const closed = await Promise.all(
        sockets.map((s) =>
          Promise.race([closedIn(s), new Promise<number>((r) => setTimeout(() => r(Infinity), 800))]),
        ),
      );
      for (const s of sockets) s.destroy();
      return closed;
    });
    // 160 from four addresses, each within its per-address limit; the node holds 120 in all.
    expect(outcome.result.filter((ms) => ms < 1_000).length).toBeGreaterThanOrEqual(
      160 - LIMITS.maxConnections,
    );
    await limitLogged("maxConnections");
    await expectHeld(outcome);
  });

  it("a stream flood on one connection: past maxConcurrentStreams it is closed within 1 s, and logged", async () => {
    const outcome = await underAttack(target(), () =>
      streamFlood({
        port: node!.port,
        localAddress: "127.0.0.8",
        path: swarmService().Branch.path,
        streams: 10 * LIMITS.maxConcurrentStreams,
        timeoutMs: 2_000,
        watchMs: 1_500,
      }),
    );
    const { resets, goaway, firstRefusalMs } = outcome.result;
    expect(resets.size > 0 || goaway !== undefined).toBe(true);
    expect(firstRefusalMs).toBeLessThan(1_000);
    await limitLogged("maxConcurrentStreams");
    await expectHeld(outcome);
  });

  it("silent sockets: closed after handshakeTimeoutMs, within 1 s of it", async () => {
    const outcome = await underAttack(target(), async () => {
      const sockets: Socket[] = [];
      for (const host of ["127.0.0.9", "127.0.0.10"]) {
        for (let i = 0; i < 30; i++) {
          const socket = connect({ port: node!.port, host: "127.0.0.1", localAddress: host });
          socket.on("error", () => undefined);
          socket.resume();
          sockets.push(socket);
        }
      }
      const closed = await Promise.all(sockets.map(closedIn));
      return closed;
    });
    for (const ms of outcome.result) expect(ms).toBeLessThan(LIMITS.handshakeTimeoutMs + 1_000);
    await limitLogged("handshakeTimeoutMs");
    await expectHeld(outcome);
  });

  it("idle connections: closed after idleTimeoutMs, within 1 s of it", async () => {
    const outcome = await underAttack(target(), async () => {
      const sessions = await Promise.all(
        Array.from({ length: 30 }, () => session(node!.address, "127.0.0.11")),
      );
      return Promise.all(sessions.map(closedIn));
    });
    for (const ms of outcome.result) expect(ms).toBeLessThan(LIMITS.idleTimeoutMs + 1_000);
    await limitLogged("idleTimeoutMs");
    await expectHeld(outcome);
  });

  it("a client that never reads: cut off past maxPendingSendBytes within 1 s", async () => {
    const frame = frameOf("Branch", {
      kind: "echo",
      branchId: "r",
      payload: Buffer.from(JSON.stringify("x".repeat(200_000))),
    });
    const outcome = await underAttack(target(), async () => {
      const sessions = await Promise.all(
        Array.from({ length: 8 }, () =>
          session(node!.address, "127.0.0.12").then((s) => {
            // a small window: the node's replies wait on it
            s.settings({ initialWindowSize: 65_535 });
            return s;
          }),
        ),
      );
      return Promise.all(
        sessions.map((s) => {
          const closed = closedIn(s);
          let sent = 0;
          for (let i = 0; i < 4; i++) {
            const req = s.request({
              ":method": "POST",
              ":path": swarmService().Branch.path,
              "content-type": "application/grpc",
              te: "trailers",
            });
            req.on("error", () => undefined);
            req.pause(); // never reads
            req.end(frame, () => (sent = Date.now()));
          }
          return closed.then(() => Date.now() - sent);
        }),
      );
    });
    for (const ms of outcome.result) expect(ms).toBeLessThan(1_000);
    await limitLogged("maxPendingSendBytes");
    await expectHeld(outcome);
  });

  it("an abandon-id flood: held to maxAbandonBytes, each Abandon answered within 1 s", async () => {
    const outcome = await underAttack(target(), async () => {
      const s = await session(node!.address, "127.0.0.13");
      try {
        const all: RawStatus[] = [];
        // 25 × 40 ids of 16 KB: 16 MB of ids against a 1 MiB bound
        for (let i = 0; i < 25; i++) {
          const ids = Array.from({ length: 40 }, (_, j) => `${i}-${j}-${"i".repeat(16_000)}`);
          all.push(await call(s, "Abandon", frameOf("Abandon", { branchIds: ids })));
        }
        return all;
      } finally {
        s.close();
      }
    });
    for (const r of outcome.result) {
      expect(r.code).toBe(OK);
      expect(r.ms).toBeLessThan(1_000);
    }
    await limitLogged("maxAbandonBytes");
    await expectHeld(outcome);
  });

  it("Coordinate overload: past the limit and queue RESOURCE_EXHAUSTED with a retry hint within 1 s", async () => {
    const frame = frameOf("Coordinate", {
      kind: "vote",
      payload: Buffer.from(JSON.stringify({ question: "ship?" })),
      required: 1,
    });
    const outcome = await underAttack(target(), async () => {
      const sessions = await Promise.all(
        Array.from({ length: 20 }, () => session(node!.address, "127.0.0.14")),
      );
      try {
        // 30 calls a connection, within its stream limit
        return await Promise.all(
          Array.from({ length: 600 }, (_, i) =>
            call(sessions[i % sessions.length]!, "Coordinate", frame, 3_000),
          ),
        );
      } finally {
        for (const s of sessions) s.close();
      }
    });
    const refused = outcome.result.filter((r) => r.code === RESOURCE_EXHAUSTED);
    const ok = outcome.result.filter((r) => r.code === OK);
    expect(ok.length + refused.length).toBe(600);
    expect(outcome.result.filter((r) => r.code === GAVE_UP)).toEqual([]);
    expect(ok.length).toBeGreaterThanOrEqual(LIMITS.coordinateMaxConcurrent);
    for (const r of refused) {
      expect(r.ms).toBeLessThan(1_000);
      expect(Number(r.headers["grpc-retry-pushback-ms"])).toBeGreaterThan(0);
    }
    await expectHeld(outcome);
  });
});
