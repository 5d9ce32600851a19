/**
 * One bad peer among four: it answers votes outside the options. Its answers count as failures of its
 * branches, it is ejected from the coordinator's fan-outs within 10 of them, and the coordinator keeps
 * committing the good peers' answers (a majority of them or all; >= 95% of fan-outs not degraded).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import type { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

let peers: SwarmNode[] = [];
let coord: SwarmNode | undefined;

beforeAll(async () => {
  peers = await Promise.all(
    (
      [
        ["good-1", "yes"],
        ["good-2", "yes"],
        ["good-3", "yes"],
        ["bad", "maybe"],
      ] as const
    ).map(([id, stance]) =>
      startNode(["--node-id", id, "--listen", "127.0.0.1:0"], {
        handlers: [{ kind: "vote", use: "vote", options: { stance } }],
      }),
    ),
  );
  coord = await startNode([
    ...["--node-id", "coord", "--listen", "127.0.0.1:0", "--peers", peers.map((p) => p.address).join(",")],
    ...["--probe-interval-ms", "100", "--probe-timeout-ms", "100"],
  ]);
  await untilPeersUp(coord, 4);
}, 60_000);

afterAll(() => {
  for (const n of [coord, ...peers]) n?.forceStop();
});

describe("a peer answering votes outside the options", () => {
  it("is ejected within 10 fan-outs and the others' answers keep committing", async () => {
    const client = new NodeClient(coord!.address);
    const replies = [];
    try {
      for (let i = 0; i < 40; i++) {
        replies.push(await client.coordinate({ kind: "vote", payload: { question: "ship?" } }, 2_000));
      }
    } finally {
      client.close();
    }
    const firstWithout = replies.findIndex((r) => !r.branches.some((b) => b.peer === "bad"));
    expect(firstWithout).toBeGreaterThanOrEqual(0);
    expect(firstWithout).toBeLessThanOrEqual(10);
    const notDegraded = replies.filter((r) => !r.degraded && r.committed >= 2).length;
    expect(notDegraded / replies.length).toBeGreaterThanOrEqual(0.95);
    expect(replies.at(-1)!.action).toBe("yes");
  }, 60_000);
});
