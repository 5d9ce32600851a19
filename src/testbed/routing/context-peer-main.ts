/**
 * A context-worker peer process for the routing testbed: `node context-peer-main.js '<json>'` with
 * `{ nodeId, worker }` serves the `context` task on 127.0.0.1:<free port>, prints `READY <address>`
 * on stdout, and stops on SIGTERM/SIGINT.
 */
import { systemClock } from "../../clock/clock.js";
import { HandlerRegistry } from "../../mesh/handler.js";
import { createSwarmServer } from "../../mesh/server.js";
import { createContextWorker } from "../../peers/context-worker.js";
import type { ContextWorkerOptions } from "../../peers/context-worker.js";

interface PeerConfig {
  readonly nodeId: string;
  readonly worker: ContextWorkerOptions;
}

async function main(): Promise<void> {
  const config = JSON.parse(process.argv[2] ?? "{}") as PeerConfig;
  const worker = createContextWorker(config.worker, config.nodeId, systemClock);
  const server = createSwarmServer({
    nodeId: config.nodeId,
    handlers: new HandlerRegistry([worker]),
    concurrency: 4096,
    maxQueue: 4096,
  });
  const { address } = await server.listen("127.0.0.1:0");
  process.stdout.write(`READY ${address}\n`);
  const stop = (): void => {
    server.forceClose();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`context peer failed: ${String(error)}\n`);
  process.exit(1);
});
