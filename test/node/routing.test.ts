/** The daemon routes when configured: `routing.policy` + `routing.k` pick k of the live peers. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import type { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

const peers: SwarmNode[] = [];
let coordinator: SwarmNode | undefined;

beforeAll(async () => {
  for (const id of ["r-1", "r-2", "r-3"]) {
    peers.push(await startNode(["--node-id", id, "--listen", "127.0.0.1:0", "--handlers", "vote"]));
  }
  coordinator = await startNode([
    ...["--node-id", "r-coord", "--listen", "127.0.0.1:0"],
    ...["--peers", peers.map((p) => p.address).join(",")],
    ...["--probe-interval-ms", "300", "--probe-timeout-ms", "300"],
    ...["--routing-policy", "jsq", "--routing-k", "1"],
  ]);
  await untilPeersUp(coordinator, 3);
}, 60_000);

afterAll(() => {
  coordinator?.forceStop();
  for (const p of peers) p.forceStop();
});

describe("node routing", () => {
  it("sends each fan-out to routing.k of the three live peers", async () => {
    expect(coordinator!.status().peers.filter((p) => p.up)).toHaveLength(3);
    const client = new NodeClient(coordinator!.address);
    try {
      for (let i = 0; i < 3; i++) {
        const reply = await client.coordinate({ kind: "vote", payload: { question: "ship?" } }, 5_000);
        expect(reply.branches).toHaveLength(1);
      }
    } finally {
      client.close();
    }
  });
});
