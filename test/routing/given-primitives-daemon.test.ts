/**
 * The daemon routes on primitives given in its config file (`routing.primitives`) and learns nothing.
 * Two identical context peers; the coordinator's table says a resident context costs 1 (a miss 4),
 * except context `avoid`, whose reuse the table prices at 8. Only the table can make MABP send a
 * repeat of `keep` back to its holder from the first repeat (Learn-MABP credits a reuse only after
 * seeing one; unit primitives tie), and only the table can make it shun the holder of `avoid`.
 * Nodes run in this process on loopback.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { NodeClient } from "../../src/node/client.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { createLogger } from "../../src/node/logger.js";
import { SwarmNode } from "../../src/node/node.js";
import { createNodeRouting } from "../../src/node/routing-setup.js";
import { contextSignature } from "../../src/routing/context-task.js";
import { configuredPrimitives } from "../../src/routing/configured-primitives.js";
import type { PrimitivesConfig } from "../../src/routing/configured-primitives.js";
import { NO_MEMORY } from "../../src/routing/signature.js";
import { startNode, untilPeersUp } from "../node/helpers/in-process-node.js";

const primitives: PrimitivesConfig = {
  "rag/0": {
    noReuse: { work: 4, penalty: 4 },
    reuse: { work: 1, penalty: 1 },
    byContext: { avoid: { work: 8, penalty: 8 } },
  },
};

const dir = mkdtempSync(join(tmpdir(), "tailswarm-given-"));
const peers: SwarmNode[] = [];
const logs: Record<string, unknown>[] = [];
let coordinator: SwarmNode | undefined;

beforeAll(async () => {
  for (const id of ["p-1", "p-2"]) {
    const handlers = [
      {
        kind: "context",
        use: "context",
        options: { capacity: 4, unitMs: 1, verifyOnMiss: 0, memoryBudget: 50, retention: "lru" },
      },
    ];
    peers.push(await startNode(["--node-id", id, "--listen", "127.0.0.1:0"], { handlers }));
  }
  const file = join(dir, "coord.json");
  writeFileSync(
    file,
    JSON.stringify({
      nodeId: "coord",
      listen: "127.0.0.1:0",
      peers: peers.map((p) => p.address),
      probe: { intervalMs: 300, timeoutMs: 300 },
      routing: { policy: "mabp", k: 1, nu: 1, primitives },
    }),
  );
  const c = await loadConfig({ argv: ["--config", file], env: {} });
  coordinator = await SwarmNode.start({
    config: c.config,
    log: createLogger({ level: "info", write: (line) => void logs.push(JSON.parse(line)) }),
  });
  await untilPeersUp(coordinator, 2);
}, 60_000);

afterAll(() => {
  coordinator?.forceStop();
  for (const p of peers) p.forceStop();
  rmSync(dir, { recursive: true, force: true });
});

describe("routing.primitives in the daemon", () => {
  it("builds the table from the config: per-context entries at the context's signature", () => {
    const table = configuredPrimitives(primitives);
    expect(table.get("p", "rag/0", NO_MEMORY)).toMatchObject({ work: 4, penalty: 4 });
    expect(table.get("p", "rag/0", contextSignature("rag", "keep"))).toMatchObject({ work: 1, penalty: 1 });
    expect(table.get("p", "rag/0", contextSignature("rag", "avoid"))).toMatchObject({ work: 8, penalty: 8 });
  });

  it("uses given primitives and does not learn: from the config, and ahead of it from deps", () => {
    const pool = new ChannelPool();
    const base = { policy: "mabp", k: 1, nu: 1, reservationTtlMs: 500, staleMs: 2_000 } as const;
    const given = createNodeRouting({ ...base, primitives }, { pool, peers: () => [] });
    expect(given.primitivesSource).toBe("given");
    expect(given.learned).toBeUndefined();
    const learning = createNodeRouting(base, { pool, peers: () => [] });
    expect(learning.primitivesSource).toBe("learned");
    expect(learning.learned).toBeDefined();
    const fromDeps = createNodeRouting(base, { pool, peers: () => [], primitives: configuredPrimitives({}) });
    expect(fromDeps.learned).toBeUndefined();
    pool.closeAll();
    expect(logs.find((l) => l.msg === "listening")).toMatchObject({ routing: "mabp", primitives: "given" });
  });

  it("routes by the configured w and p: back to the holder of `keep`, away from the holder of `avoid`", async () => {
    expect(coordinator!.status().peers.filter((p) => p.up)).toHaveLength(2);
    const client = new NodeClient(coordinator!.address);
    const route = async (context: string): Promise<string> => {
      const reply = await client.coordinate(
        { kind: "context", payload: { requestClass: "rag", context } },
        5_000,
      );
      expect(reply.branches).toHaveLength(1);
      return reply.branches[0]!.peer;
    };
    try {
      const holder = await route("keep"); // a miss on either peer (they tie); the object stays there
      for (let i = 0; i < 4; i++) expect(await route("keep")).toBe(holder);
      const first = await route("avoid");
      const second = await route("avoid");
      expect(second).not.toBe(first);
    } finally {
      client.close();
    }
  }, 60_000);
});
