/**
 * `fanoutRegions`: nodes in three regions on loopback; a coordinator told to fan out to two of them
 * sends branches only to their peers (each peer's region learned through State), and one with the
 * list empty reaches every region.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import type { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

const probe = ["--probe-interval-ms", "100", "--probe-timeout-ms", "100"];
let peers: SwarmNode[] = [];
let scoped: SwarmNode | undefined;
let open: SwarmNode | undefined;

beforeAll(async () => {
  peers = await Promise.all(
    (
      [
        ["us-1", "us-east"],
        ["us-2", "us-east"],
        ["eu-1", "eu-west"],
        ["ap-1", "ap-south"],
      ] as const
    ).map(([id, region]) => startNode(["--node-id", id, "--region", region, "--listen", "127.0.0.1:0"])),
  );
  const seeds = ["--peers", peers.map((p) => p.address).join(",")];
  scoped = await startNode([
    ...["--node-id", "coord-scoped", "--region", "us-east", "--listen", "127.0.0.1:0", ...seeds, ...probe],
    ...["--fanout-regions", "us-east,eu-west"],
  ]);
  open = await startNode(["--node-id", "coord-all", "--listen", "127.0.0.1:0", ...seeds, ...probe]);
  await Promise.all([untilPeersUp(scoped, 4), untilPeersUp(open, 4)]);
}, 60_000);

afterAll(() => {
  for (const n of [scoped, open, ...peers]) n?.forceStop();
});

async function echoFrom(node: SwarmNode): Promise<{ committed: number; action: unknown }> {
  const client = new NodeClient(node.address);
  try {
    return await client.coordinate({ kind: "echo", payload: { vote: "yes" } }, 5_000);
  } finally {
    client.close();
  }
}

describe("fanoutRegions", () => {
  it("sends branches only to peers of the listed regions", async () => {
    const status = scoped!.status();
    expect(status.peers.filter((p) => p.up).map((p) => [p.peerId, p.region])).toEqual(
      expect.arrayContaining([
        ["ap-1", "ap-south"],
        ["eu-1", "eu-west"],
      ]),
    );
    const r = await echoFrom(scoped!);
    expect(r.committed).toBe(3); // us-1, us-2, eu-1; never ap-1
    expect(r.action).toBe("yes");
  });

  it("with the list empty, fans out to every region", async () => {
    expect((await echoFrom(open!)).committed).toBe(4);
  });
});
