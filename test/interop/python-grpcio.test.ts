/**
 * A node driven from python3-grpcio (Debian's package) through stubs generated from proto/ by
 * protoc and the gRPC Python plugin (Debian's protobuf-compiler, protobuf-compiler-grpc): health,
 * Coordinate, and a call whose peers answer after its deadline.
 */
import { execFile, execFileSync } from "node:child_process";
import { accessSync, constants, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROTO_ROOT } from "../../src/mesh/proto.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { SwarmNode } from "../../src/node/node.js";
import { requireBackend } from "../support/backend.js";

const PYTHON = "/usr/bin/python3";
const PROTOC = "/usr/bin/protoc";
const PLUGIN = "/usr/bin/grpc_python_plugin";
const script = join(dirname(fileURLToPath(import.meta.url)), "drive_node.py");
/** grpc-health-check's proto/health/v1/health.proto: its include root. */
const HEALTH_ROOT = join(dirname(healthProtoPath), "..", "..");

let skipWhy = "";
try {
  execFileSync(PYTHON, ["-c", "import grpc, google.protobuf"], { stdio: "pipe" });
  execFileSync(PROTOC, ["--version"], { stdio: "pipe" });
  accessSync(PLUGIN, constants.X_OK);
} catch (err) {
  skipWhy =
    `python3-grpcio, python3-protobuf, protoc or ${PLUGIN} missing (install python3-grpcio python3-protobuf ` +
    `protobuf-compiler protobuf-compiler-grpc): ${(err as Error).message.split("\n")[0]}`;
}
requireBackend("python3-grpcio", skipWhy === "", skipWhy);

let stubs = "";

let coordinator: SwarmNode | undefined;
let peer: SwarmNode | undefined;

beforeAll(async () => {
  if (skipWhy !== "") return;
  stubs = mkdtempSync(join(tmpdir(), "tailswarm-pystubs-"));
  execFileSync(
    PROTOC,
    [
      `-I${PROTO_ROOT}`,
      `-I${HEALTH_ROOT}`,
      `--python_out=${stubs}`,
      `--grpc_python_out=${stubs}`,
      `--plugin=protoc-gen-grpc_python=${PLUGIN}`,
      "tailswarm/v1/swarm.proto",
      "health/v1/health.proto",
    ],
    { stdio: "pipe" },
  );
  const peerConfig = await loadConfig({ argv: ["--node-id", "py-peer", "--listen", "127.0.0.1:0"], env: {} });
  peer = await SwarmNode.start({
    config: {
      ...peerConfig.config,
      handlers: [
        { kind: "vote", use: "vote", options: { stance: "ship" } },
        // 5 s of modelled latency: far beyond any deadline the test gives.
        {
          kind: "slow",
          use: "synthetic",
          options: { body: { medianMs: 5_000, sigma: 0 }, wrap: { use: "vote" } },
        },
      ],
    },
  });
  const c = await loadConfig({
    argv: [
      "--node-id",
      "py-coord",
      "--listen",
      "127.0.0.1:0",
      "--peers",
      peer.address,
      "--probe-interval-ms",
      "200",
      "--probe-timeout-ms",
      "200",
      // no horizon probe: the slow branch is then a late branch, the deadline path this test checks
      "--horizon-probe-share",
      "0",
    ],
    env: {},
  });
  coordinator = await SwarmNode.start({ config: c.config });
  for (let i = 0; i < 100 && !coordinator.status().peers.some((p) => p.up); i++) {
    await new Promise((r) => setTimeout(r, 100));
  }
}, 60_000);

afterAll(() => {
  coordinator?.forceStop();
  peer?.forceStop();
  if (stubs !== "") rmSync(stubs, { recursive: true, force: true });
});

describe.skipIf(skipWhy !== "")("python3-grpcio interop", () => {
  it("checks health, coordinates within a deadline, and gets the prior, marked no_answer, from slow peers", async () => {
    const out = await new Promise<string>((resolve, reject) => {
      execFile(PYTHON, [script, stubs, coordinator!.address], { timeout: 60_000 }, (err, stdout, stderr) =>
        err ? reject(new Error(`${err.message}\n${stderr}`)) : resolve(stdout),
      );
    });
    const r = JSON.parse(out) as {
      health: string;
      coordinate: {
        action: string;
        mode: string;
        committed: number;
        node_id: string;
        info_gain_set: boolean;
        branches: { peer: string; outcome: string }[];
      };
      slow: string;
      slow_no_answer?: boolean;
    };
    expect(r.health).toBe("SERVING");
    expect(r.coordinate).toMatchObject({
      action: "ship",
      committed: 1,
      node_id: "py-coord",
      info_gain_set: true,
      branches: [{ peer: "py-peer", outcome: "committed" }],
    });
    expect(["speculate", "synchronous"]).toContain(r.coordinate.mode);
    // No peer answers in time: the node replies by the deadline with the prior, marked no_answer; on a
    // loaded machine that reply may still reach the client after its deadline.
    if (r.slow === "OK") expect(r.slow_no_answer).toBe(true);
    else expect(r.slow).toBe("DEADLINE_EXCEEDED");
  });
});
