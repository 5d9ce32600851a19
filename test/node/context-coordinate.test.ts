/**
 * `Coordinate` of a `context` task through a real node on loopback: the node picks the context-result
 * decision model for kind `context`, so the answered branch counts as committed (not as a failed
 * decision), the action is the served result, and relevance and information gain are computed.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { NodeClient } from "../../src/node/client.js";
import { decisionModel } from "../../src/node/decision-model.js";
import type { SwarmNode } from "../../src/node/node.js";
import { startNode, untilPeersUp } from "./helpers/in-process-node.js";

const peers: SwarmNode[] = [];
let coordinator: SwarmNode | undefined;
let client: NodeClient | undefined;

beforeAll(async () => {
  for (const id of ["ctx-1", "ctx-2"]) {
    const handlers = [
      {
        kind: "context",
        use: "context",
        // every miss is verified, no hit is: `prefer: verified` then has something to tell apart
        options: { capacity: 4, unitMs: 1, verifyOnMiss: 1, verifyOnHit: 0, verifyWork: 1 },
      },
    ];
    peers.push(await startNode(["--node-id", id, "--listen", "127.0.0.1:0"], { handlers }));
  }
  coordinator = await startNode([
    ...["--node-id", "ctx-coord", "--listen", "127.0.0.1:0"],
    ...["--peers", peers.map((p) => p.address).join(",")],
    ...["--probe-interval-ms", "300", "--probe-timeout-ms", "300"],
  ]);
  await untilPeersUp(coordinator, 2);
  client = new NodeClient(coordinator.address);
}, 60_000);

afterAll(() => {
  client?.close();
  coordinator?.forceStop();
  for (const p of peers) p.forceStop();
});

interface Served {
  peer: string;
  answer: { node: string; hit: boolean; work: number; downstream: number };
}

describe("Coordinate of a context task", () => {
  it("commits the first served result: the action, its relevant branch, 1 bit per committed answer", async () => {
    expect(coordinator!.status().peers.filter((p) => p.up)).toHaveLength(2);
    const reply = await client!.coordinate(
      { kind: "context", payload: { requestClass: "rag", context: "c1" } },
      5_000,
    );
    const action = reply.action as Served;
    expect(action.answer).toMatchObject({ node: action.peer, hit: false, downstream: 1 });
    expect(reply.failed).toBe(0);
    expect(reply.committed).toBeGreaterThanOrEqual(1);
    const relevant = reply.branches.filter((b) => b.decisionRelevant);
    expect(relevant.map((b) => b.peer)).toEqual([action.peer]);
    expect(reply.infoGainPerCommitted).toBeCloseTo(1 / reply.committed);
    expect(reply.degraded).toBe(false);
  }, 30_000);

  it("with prefer verified, waits past a hit (no verifier) for the verified miss and uses it", async () => {
    // c2 made resident on ctx-1 alone, by a branch sent straight to it: ctx-1 then answers a hit
    // (never verified), ctx-2 a miss (always verified).
    const pool = new ChannelPool();
    const grpc = new GrpcTransport({ pool });
    try {
      const warm = await grpc.branch(
        peers[0]!.address,
        {
          fanoutId: "warm",
          branchId: "warm-c2",
          task: { kind: "context", payload: { requestClass: "rag", context: "c2" } },
          origin: "test",
          hop: 0,
          deadline: Date.now() + 5_000,
        },
        { signal: new AbortController().signal },
      );
      expect(warm).toMatchObject({ kind: "answer", answer: { hit: false } });
    } finally {
      grpc.close();
      pool.closeAll();
    }
    const reply = await client!.coordinate(
      {
        kind: "context",
        payload: { requestClass: "rag", context: "c2" },
        decision: "context-result",
        options: { prefer: "verified" },
      },
      5_000,
    );
    const action = reply.action as Served;
    expect(action).toMatchObject({ peer: "ctx-2", answer: { node: "ctx-2", hit: false, downstream: 1 } });
    expect(reply.failed).toBe(0);
    expect(reply.committed).toBe(2);
    expect(reply.branches.filter((b) => b.decisionRelevant).map((b) => b.peer)).toEqual(["ctx-2"]);
    expect(reply.infoGainPerCommitted).toBeCloseTo(0.5);
  }, 30_000);

  it("names a bad decision option with INVALID_ARGUMENT", async () => {
    const err = await client!
      .coordinate(
        {
          kind: "context",
          payload: { requestClass: "rag", context: "c3" },
          options: { prefer: "cheapest" },
        },
        5_000,
      )
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 3 }); // grpc INVALID_ARGUMENT
    expect((err as Error).message).toContain(
      'options.prefer: got "cheapest", expected one of first, verified',
    );
  });
});

describe("the Coordinate decision model of a context task", () => {
  it("is context-result by default for kind context, quorum-vote for other kinds", () => {
    expect(decisionModel(undefined, undefined, { kind: "context", payload: {} }).name).toBe("context-result");
    expect(decisionModel(undefined, undefined, { kind: "vote", payload: {} }).name).toBe("quorum-vote");
    expect(decisionModel(undefined, undefined, { kind: "constructor", payload: {} }).name).toBe(
      "quorum-vote",
    );
    expect(decisionModel("context", { prefer: "verified" }, { kind: "rag", payload: {} }).name).toBe(
      "context-result",
    );
    expect(decisionModel("quorum-vote", undefined, { kind: "context", payload: {} }).name).toBe(
      "quorum-vote",
    );
  });

  it("rejects a bad option, naming it", () => {
    const task = { kind: "context", payload: {} };
    expect(() => decisionModel(undefined, { prefer: "best" }, task)).toThrow(
      'options.prefer: got "best", expected one of first, verified',
    );
    expect(() => decisionModel(undefined, { prior: "x" }, task)).toThrow(
      'options.prior: got "x", expected no such option (context-result: prefer)',
    );
  });
});
