/** Shared fixtures for the mesh tests: real servers on 127.0.0.1:0 and small handlers. */
import { LatencyBook } from "../../src/estimate/latency-book.js";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { HandlerRegistry } from "../../src/mesh/handler.js";
import type { HandlerContext, TaskHandler } from "../../src/mesh/handler.js";
import { createSwarmServer } from "../../src/mesh/server.js";
import type { SwarmServer, SwarmServerOptions } from "../../src/mesh/server.js";
import type { PeerHealth } from "../../src/mesh/membership/health.js";
import type { Membership } from "../../src/mesh/membership/membership.js";
import type { NodeConfig } from "../../src/node/config/types.js";
import { silentLogger } from "../../src/node/logger.js";
import { createNodeMembership } from "../../src/node/node-membership.js";

export const echo: TaskHandler = {
  kind: "echo",
  async handle(task) {
    return task.payload;
  },
};

/** Works for `payload.ms` (default: until aborted), stopping when the signal aborts. */
export function sleeper(seen?: (ctx: HandlerContext) => void): TaskHandler {
  return {
    kind: "sleep",
    handle(task, ctx) {
      seen?.(ctx);
      const ms = (task.payload as { ms?: number } | null)?.ms ?? 60_000;
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => resolve({ slept: ms }), ms);
        ctx.signal.addEventListener(
          "abort",
          () => {
            clearTimeout(t);
            reject(ctx.signal.reason);
          },
          { once: true },
        );
      });
    },
  };
}

export const thrower: TaskHandler = {
  kind: "boom",
  async handle() {
    throw new Error("kaboom");
  },
};

export interface Started {
  server: SwarmServer;
  address: string;
  port: number;
}

export async function startServer(
  options: Partial<SwarmServerOptions> & { handlers?: HandlerRegistry },
  address = "127.0.0.1:0",
): Promise<Started> {
  const server = createSwarmServer({
    ...options,
    nodeId: options.nodeId ?? "n1",
    handlers: options.handlers ?? new HandlerRegistry([echo, sleeper(), thrower]),
  });
  const { port, address: bound } = await server.listen(address);
  return { server, address: bound, port };
}

/** Polls `check` every 10 ms until it is true or `timeoutMs` passes. */
export async function until(check: () => boolean, timeoutMs = 5_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * The node's membership over `config` and `health`, with every peer in its active set and never in use
 * (a LatencyBook stand-in), started; its channels and itself are stopped through `cleanup`.
 */
export async function startNodeMembership(
  config: NodeConfig,
  health: PeerHealth,
  cleanup: (() => void)[],
): Promise<Membership> {
  const pool = new ChannelPool();
  cleanup.push(() => pool.closeAll());
  const book = { tracks: () => true, options: new LatencyBook().options, reset() {}, forget() {} };
  const m = createNodeMembership(config, { pool, book, health, log: silentLogger });
  cleanup.push(() => m.stop());
  await m.start();
  return m;
}
