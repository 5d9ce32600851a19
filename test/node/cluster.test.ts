/** Three node processes on loopback: coordinate end to end, status, a killed peer, SIGTERM drain. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { killAll, runCli, spawnNode } from "./helpers/spawn-node.js";
import type { RunningNode } from "./helpers/spawn-node.js";
import { scratchDir } from "../support/scratch-dir.js";

const probe = ["--probe-interval-ms", "500", "--probe-timeout-ms", "500", "--probe-failure-threshold", "2"];
// status counts a's samples per peer across several CLI runs (seconds each on a loaded machine): a
// window longer than any run keeps the test about counting, not about how fast the machine is.
const longWindow = ["--estimator-window-ms", "600000"];
// Both peers vote "ship" against a prior of "hold": the second answer can always still tie the vote,
// so every fan-out waits for both (no early stop).
const decision = { decision: "quorum-vote", options: { options: ["ship", "hold"], prior: "hold" } };
const dir = scratchDir("cluster");
const peerConfig = join(dir(), "peer.yaml");
writeFileSync(
  peerConfig,
  [
    "handlers:",
    "  - { kind: vote, use: vote, options: { stance: ship } }",
    // relative to this file's directory: use an absolute path to the example
    `  - { kind: slow, use: ${JSON.stringify(join(process.cwd(), "peers/examples/slow-echo.mjs"))} }`,
    "",
  ].join("\n"),
);
let b: RunningNode | undefined;
let c: RunningNode | undefined;
let a: RunningNode | undefined;

beforeAll(async () => {
  [b, c] = await Promise.all([
    spawnNode(["--config", peerConfig, "--node-id", "b", "--listen", "127.0.0.1:0"], {
      TAILSWARM_REGION: "eu",
    }),
    spawnNode(["--config", peerConfig, "--node-id", "c", "--region", "us", "--listen", "127.0.0.1:0"]),
  ]);
  a = await spawnNode(
    [
      "--node-id",
      "a",
      "--listen",
      "127.0.0.1:0",
      "--peers",
      `${b.address},${c.address}`,
      ...probe,
      ...longWindow,
    ],
    { TAILSWARM_DRAIN_GRACE_MS: "3000" },
  );
  // Both peers are up once a's probes answered.
  await a.waitForLog((l) => l.msg === "peer up" && l.peer === "c");
  await a.waitForLog((l) => l.msg === "peer up" && l.peer === "b");
}, 120_000);

afterAll(() => killAll([a, b, c]));

describe("a three-node swarm", () => {
  it("coordinates a vote across the peers", async () => {
    const client = new NodeClient(a!.address);
    try {
      const r = await client.coordinate(
        { kind: "vote", payload: { question: "ship?" }, ...decision },
        10_000,
      );
      expect(r.nodeId).toBe("a");
      expect(["speculate", "synchronous"]).toContain(r.mode);
      expect(r.committed).toBe(2);
      expect(r.action).toBe("ship");
      expect(r.decisionChanged).toBe(true);
      expect(await client.health()).toBe("SERVING");
    } finally {
      client.close();
    }
  });

  it("coordinate and status verbs print what the node reports", async () => {
    const co = await runCli([
      "coordinate",
      a!.address,
      "--task",
      "vote",
      "--payload",
      '{"question":"q2"}',
      "--options",
      JSON.stringify(decision.options),
      "--deadline-ms",
      "10000",
      "--json",
    ]);
    expect(co.code).toBe(0);
    const reply = JSON.parse(co.stdout) as { action: string; committed: number; nodeId: string };
    expect(reply).toMatchObject({ action: "ship", committed: 2, nodeId: "a" });

    const st = await runCli(["status", a!.address]);
    expect(st.code).toBe(0);
    expect(st.stdout).toMatch(/node a at/);
    expect(st.stdout).toMatch(/decisions: \d+ fan-outs/);
    expect(st.stdout).toMatch(/\n {2}b +127\.0\.0\.1:\d+ +eu +up /);
    expect(st.stdout).toMatch(/\n {2}c +127\.0\.0\.1:\d+ +us +up /);

    const js = await runCli(["status", a!.address, "--json"]);
    const s = JSON.parse(js.stdout) as { peers: { peerId: string; samples: number }[]; fanouts: number };
    expect(s.fanouts).toBeGreaterThanOrEqual(2);
    expect(s.peers.map((p) => p.peerId).sort()).toEqual(["b", "c"]);
    expect(s.peers.every((p) => p.samples >= 2)).toBe(true);

    // A generous deadline: the refusal is immediate, but a loaded CI machine can take 0.5 s to connect.
    const bad = await runCli(["coordinate", a!.address, "--task", "vote", "--deadline-ms", "10000"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("INVALID_ARGUMENT");
  });

  it("drains in-flight work on SIGTERM, then a killed peer is marked down and fan-outs still resolve", async () => {
    const client = new NodeClient(a!.address);
    try {
      // A branch that takes 800 ms is running on b and c when b gets SIGTERM: b drains it, then exits 0.
      const pending = client.coordinate(
        { kind: "slow", payload: { delayMs: 800, vote: "ship" }, ...decision },
        10_000,
      );
      await b!.waitForLog(() => false, 300).catch(() => undefined);
      b!.kill("SIGTERM");
      const r = await pending;
      expect(r.committed).toBe(2);
      expect(await b!.exited).toBe(0);
      const draining = b!.logs.find((l) => l.msg === "draining");
      expect(draining?.inFlight).toBe(1);
      expect(b!.logs.find((l) => l.msg === "stopped")?.drained).toBe(true);

      // c dies hard: the next fan-out resolves by its deadline, and c is marked down.
      c!.kill("SIGKILL");
      await c!.exited;
      const r2 = await client.coordinate(
        { kind: "vote", payload: { question: "after" }, ...decision },
        3_000,
      );
      expect(r2.elapsedMs).toBeLessThan(3_000);
      // b left (drained) and c died: a counts both as down once its probes of them are refused —
      // in either order, b is probed only when idle or suspected.
      await Promise.all([
        a!.waitForLog((l) => l.msg === "peer down" && l.peer === "c"),
        a!.waitForLog((l) => l.msg === "peer down" && l.peer === "b"),
      ]);
      const s = await client.status();
      expect(s.peers.find((p) => p.peerId === "c")?.up).toBe(false);
      const after = await client.coordinate(
        { kind: "vote", payload: { question: "alone" }, ...decision },
        3_000,
      );
      expect(after.mode).toBe("degrade");
      expect(after.reason).toBe("no-live-peers");
      expect(after.action).toBe("hold");
    } finally {
      client.close();
    }
    a!.kill("SIGINT");
    expect(await a!.exited).toBe(0);
  });
});
