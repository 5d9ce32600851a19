/**
 * A tiny echo peer for bench/mesh.bench.ts: serves `echo` on 127.0.0.1:0 and prints
 * `PORT <n>` on stdout; exits when stdin closes (the parent went away).
 */
import { HandlerRegistry } from "../src/mesh/handler.js";
import { createSwarmServer } from "../src/mesh/server.js";

const server = createSwarmServer({
  nodeId: process.argv[2] ?? `peer-${process.pid}`,
  concurrency: 256,
  handlers: new HandlerRegistry([{ kind: "echo", handle: async (task) => task.payload }]),
});
const { port } = await server.listen("127.0.0.1:0");
process.stdout.write(`PORT ${port}\n`);
process.stdin.resume();
process.stdin.on("end", () => {
  server.forceClose();
  process.exit(0);
});
