/**
 * Loopback: Learn-MABP in the daemon's composition (createNodeRouting + GrpcTransport + Coordinator, as
 * src/node/node.ts wires them), over real gRPC to two context workers that differ only in what a miss
 * costs (K = 8 on `slow`, K = 2 on `cheap`). Answered branches become profiles per (peer, queue key,
 * compatibility signature), and the router's choices follow them: new contexts go to the peer seen to
 * miss cheaply; a context goes back to the peer holding it once that peer has been seen reusing it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock/clock.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import type { PeerTransport } from "../../src/engine/transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import { createSwarmServer } from "../../src/mesh/server.js";
import type { SwarmServer } from "../../src/mesh/server.js";
import { createNodeRouting } from "../../src/node/routing-setup.js";
import type { NodeRouting } from "../../src/node/routing-setup.js";
import { createContextWorker, parseContextWorkerOptions } from "../../src/peers/context-worker.js";
import { contextSignature } from "../../src/routing/context-task.js";
import { NO_MEMORY } from "../../src/routing/signature.js";

const model = predicateModel<unknown, string>({
  name: "first",
  prior: "none",
  decide: (answers) => (answers.size > 0 ? "answered" : "none"),
  canFlip: (_answers, outstanding) => outstanding.length > 0,
  parseAnswer: (raw) => raw,
});

describe("Learn-MABP over the mesh", () => {
  const servers: SwarmServer[] = [];
  const address: Record<"slow" | "cheap", string> = { slow: "", cheap: "" };
  const pool = new ChannelPool();
  let routing: NodeRouting;
  let grpc: GrpcTransport;
  let transport: PeerTransport;
  let coordinator: Coordinator;

  beforeAll(async () => {
    for (const [id, missFactor] of [
      ["slow", 8],
      ["cheap", 2],
    ] as const) {
      const worker = createContextWorker(
        parseContextWorkerOptions(
          {
            capacity: 4,
            unitMs: 1,
            missFactor,
            verifyWork: 1,
            verifyOnMiss: 1,
            verifyOnHit: 0,
            memoryBudget: 50,
          },
          "options",
        ),
        id,
        systemClock,
      );
      const server = createSwarmServer({ nodeId: id, handlers: new HandlerRegistry([worker]) });
      address[id] = (await server.listen("127.0.0.1:0")).address;
      servers.push(server);
    }
    routing = createNodeRouting(
      { policy: "mabp", k: 1, nu: 1, reservationTtlMs: 5_000, staleMs: 60_000 },
      { pool, peers: () => [] },
    );
    grpc = new GrpcTransport({ pool, onLoad: routing.onLoad });
    transport = routing.wrapTransport(grpc);
    coordinator = new Coordinator({
      transport,
      book: new LatencyBook({ windowMs: 60_000 }),
      explorationRate: 0,
      measureBelowSamples: 0,
    });
  });

  afterAll(() => {
    grpc.close();
    pool.closeAll();
    for (const s of servers) s.forceClose();
  });

  /** One fan-out of a `context` task through the router (k = 1); the peer it went to. */
  async function route(context: string): Promise<string> {
    const peers = [address.slow, address.cheap];
    const out = await coordinator.fanOut(
      { kind: "context", payload: { requestClass: "rag", context } },
      { peers, ...routing.fanoutOptions(peers.length), budgetMs: 5_000, model },
    );
    expect(out.branches).toHaveLength(1);
    expect(out.branches[0]!.result.kind).toBe("answer");
    return out.branches[0]!.peer === address.slow ? "slow" : "cheap";
  }

  /** A branch sent straight to one peer through the learning transport (no routing). */
  async function send(peer: "slow" | "cheap", context: string): Promise<unknown> {
    const r = await transport.branch(
      address[peer],
      {
        fanoutId: "teach",
        branchId: `${peer}-${context}-${Math.random()}`,
        task: { kind: "context", payload: { requestClass: "rag", context } },
        origin: "test",
        hop: 0,
        deadline: Date.now() + 5_000,
      },
      { signal: new AbortController().signal },
    );
    expect(r.kind).toBe("answer");
    return r.kind === "answer" ? r.answer : undefined;
  }

  it("learns each peer's no-reuse work, penalty and successors from its replies", async () => {
    const learned = routing.learned!;
    expect(learned).toBeDefined();
    // Nothing observed: unit work, no penalty, no successors (the prior).
    expect(learned.get(address.slow, "rag/0", NO_MEMORY)).toMatchObject({ work: 1, penalty: 0 });

    expect(await send("slow", "c1")).toMatchObject({ hit: false, stageWork: 8, downstream: 1 });
    expect(await send("cheap", "c2")).toMatchObject({ hit: false, stageWork: 2, downstream: 1 });

    expect(learned.profile(address.slow, "rag/0", NO_MEMORY)).toEqual({
      n: 1,
      entry: { work: 8, penalty: 8, successors: [{ key: "rag/1", p: 1 }] },
    });
    expect(learned.profile(address.cheap, "rag/0", NO_MEMORY)?.entry).toMatchObject({ work: 2, penalty: 2 });
    expect(learned.get(address.slow, "rag/0", NO_MEMORY).work).toBe(8);
  });

  it("sends new contexts to the peer seen to miss cheaply", async () => {
    for (const context of ["c3", "c4", "c5", "c6"]) expect(await route(context)).toBe("cheap");
    // Every one of them was a miss there: the running mean stays at K = 2 over five observations.
    expect(learned().profile(address.cheap, "rag/0", NO_MEMORY)).toMatchObject({ n: 5, entry: { work: 2 } });
  });

  it("credits a held context only once its holder has been seen reusing it", async () => {
    const c1 = contextSignature("rag", "c1");
    // `slow` holds c1 (it served it first) and advertises it, but was never seen reusing it: its
    // compatible value falls back to its no-reuse K = 8, and c1 goes to `cheap` (K = 2).
    expect(routing.views.view(address.slow, Date.now()).signatures.has(c1)).toBe(true);
    expect(learned().profile(address.slow, "rag/0", c1)).toBeUndefined();
    expect(await route("c1")).toBe("cheap");

    // `slow` reuses c1 once (1 unit, no downstream job): the (slow, c1) profile now says so...
    expect(await send("slow", "c1")).toMatchObject({ hit: true, stageWork: 1, downstream: 0 });
    expect(learned().profile(address.slow, "rag/0", c1)).toEqual({
      n: 1,
      entry: { work: 1, penalty: 1, successors: [] },
    });
    // ...and c1 now goes to `slow`, where it costs 1 unit and creates no verifier job.
    expect(await route("c1")).toBe("slow");
    // A context `slow` does not hold still goes to `cheap`.
    expect(await route("c7")).toBe("cheap");
  });

  function learned(): NonNullable<NodeRouting["learned"]> {
    return routing.learned!;
  }
});
