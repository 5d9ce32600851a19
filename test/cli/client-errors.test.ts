/**
 * The client verbs (`status`, `coordinate`, `decisions`) against what a user really points them at:
 * nothing, a bare port, an HTTP/2 server that is not gRPC, an HTTP/1 server, a gRPC server that is
 * not a node, a node; each failure one actionable line and a hint, exit 1 (2 for a bad address).
 */
import { createServer as createHttp2Server } from "node:http2";
import type { Http2Server } from "node:http2";
import { createServer as createHttpServer } from "node:http";
import type { Server as HttpServer } from "node:http";
import type { AddressInfo } from "node:net";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePorts } from "../../src/testbed/free-port.js";
import { host, ownLines, tailswarm } from "./dist.js";
import type { Daemon } from "./dist.js";

const listen = (server: Http2Server | HttpServer): Promise<number> =>
  new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port)),
  );

let http2: Http2Server;
let silent: Http2Server;
let http1: HttpServer;
let bareGrpc: grpc.Server;
let ports: { http2: number; silent: number; http1: number; grpc: number; nothing: number };
let swarm: { daemon: Daemon; addresses: Record<string, string> };

beforeAll(async () => {
  http2 = createHttp2Server((_req, res) => {
    res.statusCode = 404;
    res.end("not found");
  });
  // Takes the call and never answers.
  silent = createHttp2Server(() => undefined);
  http1 = createHttpServer((_req, res) => {
    res.statusCode = 404;
    res.end("not found");
  });
  bareGrpc = new grpc.Server();
  const grpcPort = await new Promise<number>((resolve, reject) =>
    bareGrpc.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  const listening = { http2: await listen(http2), silent: await listen(silent), http1: await listen(http1) };
  // Free ports taken while the servers listen, so that none of them is a server's.
  const [nothing, peerPort, coordPort] = await freePorts(3);
  ports = { ...listening, grpc: grpcPort, nothing: nothing! };
  // A coordinator and one vote peer in one `tailswarm host` process, as the testbed runs them.
  const peer = `127.0.0.1:${peerPort}`;
  swarm = await host([
    { nodeId: "peer", listen: peer, handlers: [{ kind: "vote", use: "vote" }] },
    { nodeId: "coord", listen: `127.0.0.1:${coordPort}`, handlers: [], peers: [peer] },
  ]);
}, 120_000);

afterAll(async () => {
  http2?.close();
  silent?.close();
  http1?.close();
  bareGrpc?.forceShutdown();
  await swarm?.daemon.stop();
});

describe("client verbs: where they point", () => {
  it("nothing listening: one line that says so, and how to start a node (no cut-off 'Resolution note')", async () => {
    for (const verb of ["status", "decisions"]) {
      const r = await tailswarm([verb, `127.0.0.1:${ports.nothing}`]);
      expect(r.code).toBe(1);
      expect(ownLines(r.stderr)).toEqual([
        `tailswarm ${verb}: no node is answering at 127.0.0.1:${ports.nothing} (connection refused); is 'tailswarm node' running there?`,
        `hint: start one with 'tailswarm node --listen 127.0.0.1:${ports.nothing}', or give the address of a running node`,
      ]);
    }
    const c = await tailswarm([
      "coordinate",
      `127.0.0.1:${ports.nothing}`,
      "--task",
      "vote",
      "--deadline-ms",
      "2000",
    ]);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("no node is answering");
    expect(c.stderr).not.toContain("Resolution note");
  });

  it("a bare port is 127.0.0.1's; an address that is neither is a usage error", async () => {
    const r = await tailswarm(["status", String(ports.nothing)]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)[0]).toContain(`no node is answering at 127.0.0.1:${ports.nothing}`);
    const node = await tailswarm(["status", swarm.addresses.coord!.split(":")[1]!]);
    expect(node.code).toBe(0);
    expect(node.stdout).toMatch(/^node coord at 127\.0\.0\.1:\d+/);
    for (const bad of ["localhost", "127.0.0.1:99999", "a b:1"]) {
      const u = await tailswarm(["status", bad]);
      expect(u.code).toBe(2);
      expect(ownLines(u.stderr)[0]).toContain(
        "expected a node address: host:port (e.g. 127.0.0.1:7400), or a port for 127.0.0.1",
      );
    }
  });

  it("an HTTP/2 server that answers 404: it is not a tailswarm node", async () => {
    const r = await tailswarm(["status", `127.0.0.1:${ports.http2}`]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)).toEqual([
      `tailswarm status: 127.0.0.1:${ports.http2} answers HTTP (status 404) but is not a tailswarm node`,
      "hint: give the node's gRPC port (its listen address), not a web, metrics or proxy port",
    ]);
    expect(r.stderr).not.toContain("UNIMPLEMENTED");
  });

  it("an HTTP/1 server: it does not speak gRPC", async () => {
    const r = await tailswarm(["status", `127.0.0.1:${ports.http1}`]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)[0]).toMatch(
      new RegExp(
        `^tailswarm status: 127\\.0\\.0\\.1:${ports.http1} does not speak gRPC over HTTP/2 .*not a tailswarm node`,
      ),
    );
  });

  it("an address that takes the call and never answers: no answer within the deadline, and what to do", async () => {
    const s = await tailswarm(["status", `127.0.0.1:${ports.silent}`, "--timeout-ms", "300"]);
    expect(s.code).toBe(1);
    expect(ownLines(s.stderr)).toEqual([
      `tailswarm status: no answer from 127.0.0.1:${ports.silent} within --timeout-ms 300`,
      "hint: check the address (a firewall that drops packets looks like this), or give more time with --timeout-ms",
    ]);
    const c = await tailswarm([
      "coordinate",
      `127.0.0.1:${ports.silent}`,
      "--task",
      "echo",
      "--deadline-ms",
      "300",
    ]);
    expect(c.code).toBe(1);
    expect(ownLines(c.stderr)).toEqual([
      `tailswarm coordinate: no answer from 127.0.0.1:${ports.silent} within --deadline-ms 300`,
      "hint: the deadline is the node's whole budget, for the fan-out and its reply; give more",
    ]);
  });

  it("a gRPC server without the service: not a tailswarm node", async () => {
    const r = await tailswarm(["decisions", `127.0.0.1:${ports.grpc}`]);
    expect(r.code).toBe(1);
    expect(ownLines(r.stderr)[0]).toBe(
      `tailswarm decisions: 127.0.0.1:${ports.grpc} is a gRPC server without tailswarm.v1.Decisions: not a tailswarm node, or one of another version`,
    );
  });
});

describe("client verbs on a node run by `tailswarm host`", () => {
  it("coordinate --task vote without --payload: the node's refusal, and a hint that names --payload", async () => {
    const r = await tailswarm([
      "coordinate",
      swarm.addresses.coord!,
      "--task",
      "vote",
      "--deadline-ms",
      "5000",
    ]);
    expect(r.code).toBe(1);
    const [line, hint] = ownLines(r.stderr);
    expect(line).toMatch(/^tailswarm coordinate: 127\.0\.0\.1:\d+: INVALID_ARGUMENT: .*payload: got null/);
    expect(hint).toBe(
      `hint: --payload was not given, so the task was null; e.g. --payload '{"question":"deploy?"}' for vote`,
    );
    expect((await tailswarm(["coordinate", "--help"])).stdout).toContain("default: none, the task gets null");
  });

  it("coordinate --json prints the documented fields and nothing else", async () => {
    const r = await tailswarm([
      "coordinate",
      swarm.addresses.coord!,
      "--task",
      "vote",
      "--payload",
      '{"question":"deploy?"}',
      "--deadline-ms",
      "5000",
      "--json",
    ]);
    expect(r.code).toBe(0);
    const reply = JSON.parse(r.stdout) as Record<string, unknown>;
    expect(Object.keys(reply)).toEqual([
      "action",
      "mode",
      "reason",
      "violation",
      "fanoutP50Ms",
      "fanoutP99Ms",
      "estimateBasis",
      "fanoutP50Kind",
      "fanoutP99Kind",
      "fanoutHorizonMs",
      "abandonCostMs",
      "decidedAbandonCostMs",
      "elapsedMs",
      "budgetMs",
      "deadlineMissed",
      "noAnswer",
      "committed",
      "abandoned",
      "late",
      "failed",
      "degraded",
      "decisionChanged",
      "infoGainPerCommitted",
      "nodeId",
      "fanoutId",
      "branches",
      "timing",
    ]);
    expect(["known", "lower-bound", "unknown"]).toContain(reply.fanoutP99Kind);
    // a finite horizon, or null when nothing censored lies beyond the completions
    expect(reply.fanoutHorizonMs === null || Number.isFinite(reply.fanoutHorizonMs)).toBe(true);
    expect(reply.nodeId).toBe("coord");
    expect(reply.committed).toBe(1);
    expect(typeof reply.infoGainPerCommitted).toBe("number");
    expect(r.stdout).not.toContain("_infoGainPerCommitted");
  });

  it("status --json carries the version; decisions works on a host node and says why each decided", async () => {
    const s = await tailswarm(["status", swarm.addresses.coord!, "--json"]);
    expect(JSON.parse(s.stdout)).toMatchObject({
      nodeId: "coord",
      version: expect.stringMatching(/^\d+\.\d+\.\d+/),
    });
    const d = await tailswarm(["decisions", swarm.addresses.coord!, "--last", "1"]);
    expect(d.code).toBe(0);
    expect(d.stdout).toMatch(/^node coord: 1 of \d+ decisions/);
    expect(d.stdout).toMatch(/SYNCHRONOUS {2}\(estimate-unknown\)\n {2}because fan-out estimate unknown/);
  });
});
