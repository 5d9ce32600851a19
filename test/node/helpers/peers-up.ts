import type { SwarmNode } from "../../../src/node/node.js";

/** Waits (up to `timeoutMs`) until `node` sees at least `count` of its peers up; returns how many it sees. */
export async function untilPeersUp(node: SwarmNode, count: number, timeoutMs = 15_000): Promise<number> {
  const up = (): number => node.status().peers.filter((p) => p.up).length;
  for (const end = Date.now() + timeoutMs; up() < count && Date.now() < end;) {
    await new Promise((r) => setTimeout(r, 100));
  }
  return up();
}
