/**
 * A replicated Coordinate over gRPC on loopback: in-process nodes, three replicas and a coordinator.
 * The request names its replicas, k and hedge policy; the reply says what was sent and refused, and
 * bad input gets a bounded INVALID_ARGUMENT naming the field.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SwarmNode } from "../../src/node/node.js";
import { SwarmClient } from "../../src/testbed/swarm-client.js";
import { startNode, untilPeersUp } from "../node/helpers/in-process-node.js";

const IDS = ["r1", "r2", "r3"];
const nodes: SwarmNode[] = [];
let coord: SwarmNode;
let client: SwarmClient;

beforeAll(async () => {
  for (const id of IDS) {
    nodes.push(
      await startNode(["--node-id", id, "--listen", "127.0.0.1:0"], {
        handlers: [{ kind: "work", use: "synthetic", options: { seed: 1, body: { medianMs: 5, sigma: 0 } } }],
      }),
    );
  }
  coord = await startNode([
    "--node-id",
    "coord",
    "--listen",
    "127.0.0.1:0",
    "--peers",
    nodes.map((n) => n.address).join(","),
    "--probe-interval-ms",
    "200",
    "--probe-timeout-ms",
    "200",
  ]);
  nodes.push(coord);
  expect(await untilPeersUp(coord, 3)).toBe(3);
  client = new SwarmClient(coord.address);
}, 60_000);

afterAll(async () => {
  client?.close();
  await Promise.all(nodes.map((n) => n.stop(500)));
});

const call = (replicated: { replicas: string[]; k: number; hedgePolicy: string }, budgetMs = 2_000) =>
  client.coordinate({
    kind: "work",
    payload: null,
    policy: "",
    decision: "",
    options: null,
    budgetMs,
    replicated,
  });

describe("a replicated Coordinate", () => {
  it("answers with the first k replicas, mode replicated, reason the hedge policy, and each refusal's reason", async () => {
    const r = await call({ replicas: IDS, k: 1, hedgePolicy: "none" });
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.value.mode).toBe("replicated");
    expect(r.value.reason).toBe("none");
    expect(r.value.committed).toBe(1);
    expect(r.value.deadlineMissed).toBe(false);
    expect(Object.keys(JSON.parse(r.value.action.toString()) as object)).toEqual(["r1"]);
    expect(r.value.backups).toEqual([]);
    expect(r.value.refused.map((x) => [x.backs, x.backup, x.reason])).toEqual([["r1", "r2", "policy-none"]]);
  });

  it("uses the node's hedge.policy (gated) when the request names none", async () => {
    const r = await call({ replicas: ["r2", "r3"], k: 1, hedgePolicy: "" });
    expect(r.ok && r.value.reason).toBe("gated");
  });

  it("refuses bad input with the field, the value and what was expected", async () => {
    const cases: [Parameters<typeof call>[0], RegExp][] = [
      [
        { replicas: ["r1", "nope"], k: 1, hedgePolicy: "none" },
        /replicated\.replicas\[1\]: got "nope", expected a live peer id/,
      ],
      [
        { replicas: IDS, k: 1, hedgePolicy: "sometimes" },
        /replicated\.hedge_policy: got "sometimes", expected one of gated, none/,
      ],
      [{ replicas: IDS, k: 3, hedgePolicy: "none" }, /k: got 3, expected an integer >= 1 < 3/],
      [{ replicas: ["r1", "r1"], k: 1, hedgePolicy: "none" }, /replicas: got .*, expected distinct peer ids/],
    ];
    for (const [req, message] of cases) {
      const r = await call(req);
      expect(r.ok).toBe(false);
      if (r.ok) continue;
      expect(r.code).toBe("INVALID_ARGUMENT");
      expect(r.message).toMatch(message);
    }
  });
});
