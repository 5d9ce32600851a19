import { loadConfig } from "../../../src/node/config/load-config.js";
import type { NodeConfig } from "../../../src/node/config/types.js";
import type { Logger } from "../../../src/node/logger.js";
import { SwarmNode } from "../../../src/node/node.js";

/**
 * A node in this process: the config from `argv` (as `tailswarm node` parses flags, no environment),
 * with `overrides` on top for what flags cannot say (handlers with options).
 */
export async function startNode(
  argv: readonly string[],
  overrides: Partial<NodeConfig> = {},
  log?: Logger,
): Promise<SwarmNode> {
  const c = await loadConfig({ argv: [...argv], env: {} });
  return SwarmNode.start({ config: { ...c.config, ...overrides }, ...(log === undefined ? {} : { log }) });
}

/** Waits (up to `timeoutMs`) until `node` sees at least `count` of its peers up; returns how many it sees. */
export async function untilPeersUp(node: SwarmNode, count: number, timeoutMs = 15_000): Promise<number> {
  const up = (): number => node.status().peers.filter((p) => p.up).length;
  for (const end = Date.now() + timeoutMs; up() < count && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return up();
}
