/**
 * The daemon learns: a coordinator node with `routing.policy: mabp` and no given primitives feeds its
 * branches' replies to Learn-MABP (the hook in src/node/node.ts), so once it has seen both context peers
 * miss, new contexts go to the one whose misses cost less. Nodes run in this process on loopback.
 * (Kind `context` is decided by the context-result model: each routed branch is committed.)
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import type { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "../node/helpers/in-process-node.js";

const peers: SwarmNode[] = [];
let coordinator: SwarmNode | undefined;

beforeAll(async () => {
  for (const [id, missFactor] of [
    ["slow", 8],
    ["cheap", 2],
  ] as const) {
    const handlers = [
      {
        kind: "context",
        use: "context",
        options: { capacity: 4, unitMs: 1, missFactor, verifyOnMiss: 0, memoryBudget: 50 },
      },
    ];
    peers.push(await startNode(["--node-id", id, "--listen", "127.0.0.1:0"], { handlers }));
  }
  coordinator = await startNode([
    ...["--node-id", "coord", "--listen", "127.0.0.1:0"],
    ...["--peers", peers.map((p) => p.address).join(",")],
    ...["--probe-interval-ms", "300", "--probe-timeout-ms", "300"],
    ...["--routing-policy", "mabp", "--routing-k", "1", "--routing-nu", "1"],
  ]);
  await untilPeersUp(coordinator, 2);
}, 60_000);

afterAll(() => {
  coordinator?.forceStop();
  for (const p of peers) p.forceStop();
});

describe("Learn-MABP in the daemon", () => {
  it("routes new contexts to the peer seen to miss cheaply, once it has seen both", async () => {
    expect(coordinator!.status().peers.filter((p) => p.up)).toHaveLength(2);
    const client = new NodeClient(coordinator!.address);
    const routeNew = async (i: number): Promise<string> => {
      const reply = await client.coordinate(
        { kind: "context", payload: { requestClass: "rag", context: `c${i}` } },
        5_000,
      );
      expect(reply.branches).toHaveLength(1);
      expect(reply.committed).toBe(1);
      return reply.branches[0]!.peer;
    };
    try {
      // Before anything is observed both peers score alike (ties broken at random); each one's first
      // miss teaches its cost.
      const seen = new Set<string>();
      let i = 0;
      while (seen.size < 2 && i < 40) seen.add(await routeNew(i++));
      expect(seen).toEqual(new Set(["slow", "cheap"]));
      for (let j = 0; j < 5; j++) expect(await routeNew(i++)).toBe("cheap");
    } finally {
      client.close();
    }
  }, 60_000);
});
