/**
 * Authorization by identity under mutual TLS, against a real node process on loopback: openssl makes
 * a CA and leaf certificates for a peer (two, to show Abandon is scoped to its issuer), a client and an
 * operator; each is allowed its RPCs and refused the others with PERMISSION_DENIED naming the identity
 * and the RPC; a Branch with a spoofed `origin` is refused.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swarmService } from "../../src/mesh/proto.js";
import type { BranchReply__Output } from "../../src/mesh/gen/tailswarm/v1/BranchReply.js";
import { NodeClient } from "../../src/node/client.js";
import { killAll, runCli, spawnNode } from "../node/helpers/spawn-node.js";
import type { RunningNode } from "../node/helpers/spawn-node.js";
import { requireBackend } from "../support/backend.js";
import { opensslAvailable, opensslCerts } from "../support/openssl-certs.js";
import { scratchDir } from "../support/scratch-dir.js";

requireBackend("openssl", opensslAvailable, "apt-get install openssl");

const dir = scratchDir("authz");
const f = (name: string): string => join(dir(), name);
const certs = opensslCerts(dir);
/** Every leaf has the same common name: identity is the SAN alone. */
const makeCert = (name: string, san: string): void => certs.cert(name, { ca: "ca", san, cn: "intern" });

const Swarm = grpc.makeGenericClientConstructor(swarmService(), "Swarm");
type Unary = (
  req: unknown,
  opts: grpc.CallOptions,
  cb: (err: grpc.ServiceError | null, r: unknown) => void,
) => void;

let node: RunningNode | undefined;
const clients: grpc.Client[] = [];

function swarmAs(name: string): Record<string, Unary> {
  const creds = grpc.credentials.createSsl(
    readFileSync(f("ca.pem")),
    readFileSync(f(`${name}.key`)),
    readFileSync(f(`${name}.pem`)),
  );
  const c = new Swarm(node!.address, creds) as unknown as grpc.Client & Record<string, Unary>;
  clients.push(c);
  return c;
}

function call(
  client: Record<string, Unary>,
  method: string,
  req: unknown,
): Promise<{ err: grpc.ServiceError | null; reply: unknown }> {
  return new Promise((resolve) => {
    client[method]!.call(client, req, { deadline: Date.now() + 5_000 }, (err, reply) =>
      resolve({ err, reply }),
    );
  });
}

function healthAs(name: string): Promise<grpc.ServiceError | null> {
  const creds = grpc.credentials.createSsl(
    readFileSync(f("ca.pem")),
    readFileSync(f(`${name}.key`)),
    readFileSync(f(`${name}.pem`)),
  );
  const c = new grpc.Client(node!.address, creds);
  clients.push(c);
  const id = (b: Buffer): Buffer => b;
  return new Promise((resolve) => {
    c.makeUnaryRequest(
      "/grpc.health.v1.Health/Check",
      id,
      id,
      Buffer.alloc(0),
      { deadline: Date.now() + 5_000 },
      (err) => resolve(err),
    );
  });
}

const branch = (branchId: string, origin: string): Record<string, unknown> => ({
  fanoutId: "f1",
  branchId,
  kind: "vote",
  payload: Buffer.from(JSON.stringify({ question: "ship?", options: ["yes", "no"] })),
  origin,
  hop: 1,
  deadlineUnixMs: 0,
  deadlineGraceMs: 0,
});

beforeAll(async () => {
  if (!opensslAvailable) return;
  certs.ca("ca");
  makeCert("node", "IP:127.0.0.1,URI:spiffe://swarm/peer/n1");
  makeCert("peer", "URI:spiffe://swarm/peer/n2");
  makeCert("peer3", "DNS:n3.peers.example");
  makeCert("client", "URI:spiffe://swarm/client/app");
  makeCert("operator", "DNS:ops.example");
  writeFileSync(
    f("node.yaml"),
    [
      "nodeId: n1",
      "listen: 127.0.0.1:0",
      "handlers: [vote]",
      "tls:",
      `  ca: ${f("ca.pem")}`,
      `  cert: ${f("node.pem")}`,
      `  key: ${f("node.key")}`,
      "  requireClientCert: true",
      "authorization:",
      '  peers: ["spiffe://swarm/peer/*", "*.peers.example"]',
      '  clients: ["spiffe://swarm/client/*"]',
      "  operators: [ops.example]",
      "",
    ].join("\n"),
  );
  node = await spawnNode(["--config", f("node.yaml")]);
}, 90_000);

afterAll(async () => {
  for (const c of clients) c.close();
  await killAll([node]);
});

const DENIED = grpc.status.PERMISSION_DENIED;

describe.skipIf(!opensslAvailable)("authorization by identity (mutual TLS)", () => {
  it("a peer may call Branch, Probe, State and Abandon, but not Coordinate or Status", async () => {
    const peer = swarmAs("peer");
    const b = await call(peer, "Branch", branch("b-allowed", "n2"));
    expect(b.err).toBeNull();
    expect((b.reply as BranchReply__Output).nodeId).toBe("n1");
    expect((await call(peer, "Probe", { sentUnixMs: 1 })).err).toBeNull();
    expect((await call(peer, "State", {})).err).toBeNull();
    expect((await call(peer, "Abandon", { branchIds: ["nothing"] })).err).toBeNull();
    const co = await call(peer, "Coordinate", { kind: "vote", payload: Buffer.from("{}") });
    expect(co.err?.code).toBe(DENIED);
    expect(co.err?.details).toContain("spiffe://swarm/peer/n2");
    expect(co.err?.details).toContain("/tailswarm.v1.Swarm/Coordinate");
    const status = new NodeClient(node!.address, {
      ca: f("ca.pem"),
      cert: f("peer.pem"),
      key: f("peer.key"),
    });
    try {
      await expect(status.status(5_000)).rejects.toMatchObject({ code: DENIED });
    } finally {
      status.close();
    }
  });

  it("a Branch whose origin is not the caller's node id is refused", async () => {
    const spoof = await call(swarmAs("peer"), "Branch", branch("b-spoof", "n1"));
    expect(spoof.err?.code).toBe(DENIED);
    expect(spoof.err?.details).toContain("origin n1");
    expect(spoof.err?.details).toContain("spiffe://swarm/peer/n2");
    // A DNS identity speaks for the node of that name.
    expect((await call(swarmAs("peer3"), "Branch", branch("b-dns", "n3.peers.example"))).err).toBeNull();
  });

  it("Abandon reaches only the branches its own caller issued", async () => {
    const peer = swarmAs("peer");
    const other = swarmAs("peer3");
    // Another peer's abandon of b-x does not stop the peer's b-x ...
    expect(await call(other, "Abandon", { branchIds: ["b-x"] })).toMatchObject({ err: null });
    const ran = await call(peer, "Branch", branch("b-x", "n2"));
    expect((ran.reply as BranchReply__Output).status).not.toBe("BRANCH_STATUS_ABANDONED");
    // ... the peer's own abandon does.
    expect(await call(peer, "Abandon", { branchIds: ["b-y"] })).toMatchObject({ err: null });
    const stopped = await call(peer, "Branch", branch("b-y", "n2"));
    expect((stopped.reply as BranchReply__Output).status).toBe("BRANCH_STATUS_ABANDONED");
  });

  it("a client may call Coordinate, but not Branch, Abandon or Status", async () => {
    const client = swarmAs("client");
    const co = await call(client, "Coordinate", {
      kind: "vote",
      payload: Buffer.from(JSON.stringify({ question: "ship?", options: ["yes", "no"] })),
      budgetMs: 500,
    });
    expect(co.err?.code ?? grpc.status.OK).not.toBe(DENIED);
    for (const [method, req] of [
      ["Branch", branch("b-c", "app")],
      ["Abandon", { branchIds: ["b-allowed"] }],
    ] as const) {
      const r = await call(client, method, req);
      expect(r.err?.code).toBe(DENIED);
      expect(r.err?.details).toContain(`/tailswarm.v1.Swarm/${method}`);
      expect(r.err?.details).toContain("spiffe://swarm/client/app");
    }
    const status = new NodeClient(node!.address, {
      ca: f("ca.pem"),
      cert: f("client.pem"),
      key: f("client.key"),
    });
    try {
      await expect(status.status(5_000)).rejects.toMatchObject({ code: DENIED });
    } finally {
      status.close();
    }
  });

  it("an operator may call Status, but not Coordinate or Branch", async () => {
    const status = new NodeClient(node!.address, {
      ca: f("ca.pem"),
      cert: f("operator.pem"),
      key: f("operator.key"),
    });
    try {
      expect((await status.status(5_000)).nodeId).toBe("n1");
    } finally {
      status.close();
    }
    const op = swarmAs("operator");
    const co = await call(op, "Coordinate", { kind: "vote", payload: Buffer.from("{}") });
    expect(co.err?.code).toBe(DENIED);
    expect(co.err?.details).toContain("ops.example");
    expect((await call(op, "Branch", branch("b-o", "ops.example"))).err?.code).toBe(DENIED);
  });

  it("health is open to every identity, and refusals are logged rate-limited", async () => {
    for (const who of ["peer", "client", "operator"]) expect(await healthAs(who)).toBeNull();
    const line = await node!.waitForLog((l) => l.msg === "permission denied", 5_000);
    expect(line.identity).toBeTypeOf("string");
    expect(line.rpc).toBeTypeOf("string");
    expect(node!.logs.filter((l) => l.msg === "permission denied").length).toBeLessThan(8);
  });
});

describe("without mutual TLS", () => {
  it("a plaintext node listens on loopback and says it is unauthenticated", async () => {
    const plain = await spawnNode(["--node-id", "p1", "--listen", "127.0.0.1:0"]);
    try {
      const line = await plain.waitForLog((l) => l.msg.startsWith("unauthenticated"), 5_000);
      expect(line.level).toBe("warn");
      expect(plain.address).toMatch(/^127\.0\.0\.1:/);
    } finally {
      await killAll([plain]);
    }
  });

  it("a policy without tls.requireClientCert does not start", async () => {
    const r = await runCli([
      "node",
      "--listen",
      "127.0.0.1:0",
      "--authorization-clients",
      "spiffe://swarm/client/*",
    ]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("tls.requireClientCert");
  });
});
