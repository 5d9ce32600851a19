/**
 * Free loopback ports for the testbed's nodes. All ports of a run are reserved at once (held open
 * until every one is known) so that two nodes never get the same port; a port can still be taken by
 * another program between release and the node's bind — the launcher reports that node's exit.
 */
import { createServer } from "node:net";
import type { Server } from "node:net";

function listen(): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve(server));
  });
}

/** `count` distinct free ports on 127.0.0.1. */
export async function freePorts(count: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < count; i++) servers.push(await listen());
    return servers.map((s) => {
      const addr = s.address();
      if (addr === null || typeof addr === "string") throw new Error("free-port: no TCP address");
      return addr.port;
    });
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
  }
}
