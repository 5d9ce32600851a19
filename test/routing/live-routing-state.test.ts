/** Loopback: a context worker's routing state reaches a coordinator's PeerViewBook over real gRPC. */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { systemClock } from "../../src/clock/clock.js";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import { RoutingStatePoller, viewFeeder } from "../../src/mesh/routing-state-poller.js";
import { createSwarmServer } from "../../src/mesh/server.js";
import type { SwarmServer } from "../../src/mesh/server.js";
import { createContextWorker, parseContextWorkerOptions } from "../../src/peers/context-worker.js";
import { contextSignature } from "../../src/routing/context-task.js";
import { PeerViewBook } from "../../src/routing/peer-view-book.js";

describe("routing state over the mesh", () => {
  const servers: { server: SwarmServer; address: string }[] = [];
  const pool = new ChannelPool();
  const views = new PeerViewBook({ staleMs: 5_000 });
  const transport = new GrpcTransport({ pool, onLoad: viewFeeder(views) });

  beforeAll(async () => {
    for (const id of ["p1", "p2"]) {
      const worker = createContextWorker(
        parseContextWorkerOptions({ capacity: 1, unitMs: 1, verifyOnMiss: 0 }, "o"),
        id,
        systemClock,
      );
      const server = createSwarmServer({ nodeId: id, handlers: new HandlerRegistry([worker]) });
      const { address } = await server.listen("127.0.0.1:0");
      servers.push({ server, address });
    }
  });

  afterAll(() => {
    transport.close();
    pool.closeAll();
    for (const s of servers) s.server.forceClose();
  });

  it("a Branch reply piggybacks the peer's queues and resident memory", async () => {
    const result = await transport.branch(
      servers[0]!.address,
      {
        fanoutId: "f",
        branchId: "b1",
        task: { kind: "context", payload: { requestClass: "rag", context: "c9" } },
        origin: "test",
        hop: 0,
        deadline: Date.now() + 5_000,
      },
      { signal: new AbortController().signal },
    );
    expect(result).toMatchObject({ kind: "answer", answer: { hit: false } });
    const view = views.view(servers[0]!.address, Date.now());
    expect(view.signatures.has(contextSignature("rag", "c9"))).toBe(true);
    expect(view).toMatchObject({ memoryUsed: 1, memoryBudget: 12, capacity: 1, backlog: 0 });
    expect(views.latest(servers[0]!.address)?.advert).toMatchObject({ served: 1, hits: 0, churn: 1 });
  });

  it("State polls fill the view of a peer no branch went to", async () => {
    const poller = new RoutingStatePoller({
      pool,
      views,
      peers: () => servers.map((s) => ({ id: s.address, address: s.address })),
    });
    expect(views.freshness(servers[1]!.address, Date.now())).toBe("unknown");
    await poller.pollOnce();
    expect(views.freshness(servers[1]!.address, Date.now())).toBe("fresh");
    expect(views.view(servers[1]!.address, Date.now())).toMatchObject({ memoryBudget: 12, backlog: 0 });
  });
});
