/**
 * The node on src/mesh's Membership, in process: a peer named at two addresses is one peer (one
 * branch per fan-out, one key for its samples, its address and its status rows), and a restarted
 * peer starts with fresh estimates.
 */
import { afterAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { SwarmNode } from "../../src/node/node.js";

const running: SwarmNode[] = [];
afterAll(() => {
  for (const n of running) n.forceStop();
});

async function node(argv: string[]): Promise<SwarmNode> {
  const { config } = await loadConfig({ argv, env: {} });
  const n = await SwarmNode.start({ config });
  running.push(n);
  return n;
}

async function until(check: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const vote = {
  kind: "vote",
  payload: { question: "ship?", options: ["ship", "hold"] },
  decision: "quorum-vote",
  options: { options: ["ship", "hold"], prior: "hold" },
};

describe("node membership", () => {
  it("one peer at two addresses is one peer; a restart resets its estimates", async () => {
    const b1 = await node(["--node-id", "b", "--listen", "127.0.0.1:0"]);
    const a = await node([
      "--node-id",
      "a",
      "--listen",
      "127.0.0.1:0",
      "--peers",
      `${b1.address},localhost:${b1.port}`,
      "--probe-interval-ms",
      "250",
      "--probe-timeout-ms",
      "250",
      "--probe-failure-threshold",
      "2",
      // Samples stay in the window however slow the machine is: the test counts them.
      "--estimator-window-ms",
      "600000",
    ]);
    await until(() => a.status().peers.filter((p) => p.up).length === 2, "both addresses up");
    const client = new NodeClient(a.address);
    try {
      for (let i = 0; i < 3; i++) {
        const r = await client.coordinate(vote, 10_000);
        expect(r.committed + r.failed + r.late + r.abandoned).toBe(1);
        expect(r.committed).toBe(1);
      }
      let peers = a.status().peers;
      expect(peers.map((p) => p.peerId)).toEqual(["b", "b"]);
      expect(peers.map((p) => p.samples)).toEqual([3, 3]);
      expect(peers.every((p) => p.restarts === 0)).toBe(true);
      // a poller asks for the counts, or the rows it reads, not a row per address
      const counts = await client.status(5_000, { omitPeers: true });
      expect([counts.peers.length, counts.peersKnown, counts.peersUp]).toEqual([0, 2, 2]);
      expect((await client.status(5_000, { peerIds: ["b"] })).peers.map((p) => p.peerId)).toEqual(["b", "b"]);
      expect((await client.status(5_000, { peerIds: ["x"] })).peers).toEqual([]);

      b1.forceStop();
      // An active peer in steady use is not probed: its failed branch is what starts the probes that
      // mark it down.
      await client.coordinate(vote, 2_000).catch(() => undefined);
      await until(() => a.status().peers.every((p) => !p.up), "b down");
      const b2 = await node(["--node-id", "b", "--listen", b1.address]);
      expect(b2.status().startedAtUnixMs).not.toBe(b1.status().startedAtUnixMs);
      await until(() => a.status().peers.every((p) => p.up), "b up again");
      peers = a.status().peers;
      expect(peers.map((p) => p.restarts)).toEqual([1, 1]);
      expect(peers.map((p) => p.samples)).toEqual([0, 0]);
      expect(peers.map((p) => p.unknownReason)).toEqual(["peer-reset", "peer-reset"]);

      const r = await client.coordinate(vote, 10_000);
      expect(r.committed).toBe(1);
      expect(a.status().peers.map((p) => p.samples)).toEqual([1, 1]);
    } finally {
      client.close();
    }
  }, 60_000);
});
