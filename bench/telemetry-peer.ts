/**
 * Child processes for bench/telemetry-grpc.bench.ts, on 127.0.0.1:0, printing `PORT <n>` on stdout;
 * each answers `cpu` on stdin with `CPU <user+system µs>` (a peer first exports the spans it still
 * batches) and exits when stdin closes.
 *
 *   telemetry-peer.ts peer <id>   an echo peer (createSwarmServer) with the node's SDK installed
 *                                 (startTelemetry from the OTEL_* env the bench passes): its Branch
 *                                 server spans are recorded when the caller's context is sampled;
 *   telemetry-peer.ts sink        an OTLP/gRPC sink: accepts TraceService/Export and
 *                                 MetricsService/Export and drops the bytes undecoded.
 */
import * as grpc from "@grpc/grpc-js";
import { HandlerRegistry } from "../src/mesh/handler.js";
import { createSwarmServer } from "../src/mesh/server.js";
import { startTelemetry } from "../src/telemetry/sdk/setup.js";
import { windowProfiler } from "./window-profiler.js";

const [role, id] = process.argv.slice(2);
/** TELEMETRY_BENCH_PROFILE_DIR: a CPU profile of the measured window (bench/window-profiler.ts). */
const profiler = windowProfiler(process.env.TELEMETRY_BENCH_PROFILE_DIR);

/** `flush` runs before each CPU reading: spans still batched are exported in the round that made them. */
function cpuOnRequest(onEnd: () => void, flush: () => Promise<void> = async () => {}): void {
  process.stdin.setEncoding("utf8");
  process.stdin.on("data", (d: string) => {
    if (d.includes("profile-start")) profiler.start();
    if (d.includes("profile-stop")) profiler.stop(id ?? role ?? "child"); // peer-0.cpuprofile, …
    if (d.includes("cpu")) {
      void flush()
        .catch(() => undefined)
        .then(() => {
          const u = process.cpuUsage();
          process.stdout.write(`CPU ${u.user + u.system}\n`);
        });
    }
  });
  process.stdin.on("end", () => {
    onEnd();
    setTimeout(() => process.exit(0), 500).unref();
  });
}

if (role === "sink") {
  const server = new grpc.Server();
  const passthrough = {
    requestStream: false,
    responseStream: false,
    requestDeserialize: (b: Buffer) => b,
    requestSerialize: (b: Buffer) => b,
    responseSerialize: () => Buffer.alloc(0),
    responseDeserialize: () => ({}),
  };
  const drop = (_call: unknown, cb: grpc.sendUnaryData<unknown>): void => cb(null, {});
  server.addService(
    { Export: { ...passthrough, path: "/opentelemetry.proto.collector.trace.v1.TraceService/Export" } },
    { Export: drop },
  );
  server.addService(
    { Export: { ...passthrough, path: "/opentelemetry.proto.collector.metrics.v1.MetricsService/Export" } },
    { Export: drop },
  );
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  process.stdout.write(`PORT ${port}\n`);
  cpuOnRequest(() => server.forceShutdown());
} else {
  const sdk = await startTelemetry({ serviceName: "tailswarm-bench-peer", serviceInstanceId: id });
  const server = createSwarmServer({
    nodeId: id ?? `peer-${process.pid}`,
    concurrency: 256,
    sampling: sdk.sampling, // as a node passes it (node-telemetry.ts)
    handlers: new HandlerRegistry([
      {
        kind: "echo",
        // A payload's `spinUs` (the control variant's TELEMETRY_BENCH_CONTROL_PEER_SPIN_US): CPU to burn
        // before answering, a known peer-side cost.
        handle: async (task) => {
          const spinUs = (task.payload as { spinUs?: unknown } | null)?.spinUs;
          if (typeof spinUs === "number" && spinUs > 0) {
            const until = performance.now() + spinUs / 1000;
            while (performance.now() < until);
          }
          return task.payload;
        },
      },
    ]),
  });
  const { port } = await server.listen("127.0.0.1:0");
  process.stdout.write(`PORT ${port}\n`);
  cpuOnRequest(
    () => {
      server.forceClose();
      // The sink may already be gone: what the peer could not export is not the bench's concern.
      sdk.shutdown().catch(() => undefined);
    },
    () => sdk.tracerProvider.forceFlush(),
  );
}
