/**
 * Cost of telemetry on real fan-outs: Coordinator.fanOut over GrpcTransport to 8 peer processes on
 * loopback (bench/telemetry-peer.ts), telemetry off vs on, side by side in one run (interleaved
 * rounds, closed loop with CONCURRENCY fan-outs in flight).
 *
 *   off  no SDK in the coordinator process (no context manager, propagator or tracer provider), the
 *        Coordinator without observer or transport wrapper — an embedding that installs nothing;
 *   control the same as "off", again (its own Coordinator): an A/A pair, so that the cost this method
 *           reads for no difference at all is printed beside the others;
 *   wire "off", but each fan-out's branches carry an unsampled W3C traceparent of their own (a fresh
 *        trace id per fan-out, as an unsampled root has) through the propagator and the AsyncLocalStorage
 *        context manager: what sending the trace context costs at both ends of the wire, by itself;
 *   on   what `tailswarm node` installs: startTelemetry() from OTEL_* (the default sampler: parent-based,
 *        at most 10 new traces/s; the default context manager, AsyncLocalStorage; BatchSpanProcessor, OTLP/gRPC
 *        traces and metrics to a sink process),
 *        createTelemetry() (fan-out tracer, metrics, flight recorder) and the instrumented transport;
 *   untraced as "on" with OTEL_TRACES_SAMPLER=parentbased_always_off: no fan-out traced, everything else
 *            as a node runs it (metrics, flight recorder, unsampled trace context on every branch). With
 *            "wire" and "on" it splits the cost: propagation alone, then the rest of the per-fan-out
 *            telemetry, then the traces the default sampler records;
 *   sync as "on" with `telemetry.contextManager: sync` (SyncContextManager: the context only within
 *        synchronous calls) in the coordinator, where "on" has the node's default, AsyncLocalStorage;
 *   always as "on" with OTEL_TRACES_SAMPLER=parentbased_always_on: every fan-out traced, 17 spans each
 *          (what a trace of every decision costs at this rate; metrics and flight recorder unchanged).
 *
 * The peers run the SDK too (OTLP to the same sink) with a parent-based sampler whose root sampler is
 * off: in "on" rounds the coordinator's sampled traceparent makes them record their Branch server
 * spans; in "off" rounds no context arrives and their spans are non-recording.
 *
 * Reported: fan-outs/s (wall), coordinator CPU per fan-out, peers' CPU per fan-out (all 8 summed) and
 * their sum — CPU being more robust than wall clock to other processes' load on the shared machine —
 * and, per variant, the coordinator's CPU per fan-out minus that of the off rounds either side, in µs
 * (median over rounds, 95% bootstrap interval; the control's line is the method's own noise).
 * Each round ends by exporting what its batch span processors still hold (coordinator, then each peer
 * before it reports its CPU), so that a round's spans are paid for in that round and not in the next
 * variant's. Target (issue 4): <= 5% cost.
 *
 * Rounds: every variant's round sits between two "off" rounds (off, X, off, Y, off, …) and its cost is
 * read against their mean; the variants take turns in a Williams design. Each round runs its variant
 * SETTLE_MS unmeasured before it measures (see SETTLE_MS). Before them, each variant
 * runs WARMUP_ROUNDS rounds unmeasured: on this 2-core machine the processes take some 15 s of hot
 * code before the optimizing compiler is done (the rate of a fresh run climbs from ~140 to ~400
 * fan-outs/s over its first 20 s).
 *
 * All variants share one coordinator process. Giving each its own process (tried, one and three per
 * variant) makes "off" cleaner but adds each process's own luck: two processes running the same "off"
 * code differed by up to 8% in throughput, persistently within a run; with three per variant the A/A
 * pair still read 3.3%, and `on` read 0.7–14.6% from run to run. Sharing one process, the A/A pair
 * read −0.8 to 3.1% in five runs.
 *
 * Heap: the coordinator (this process) runs with the V8 heap flags `tailswarm node` runs with
 * (src/cli/heap-flags.ts, restarting itself with them as a node does; TAILSWARM_V8_FLAGS overrides them
 * there and here, empty for V8's defaults): a node is what users run, and the flags set how often the
 * collector runs, so telemetry's garbage costs what it costs a node. They cost "off" more than they add
 * to telemetry's cost, so read the cost in µs per fan-out as well as in % (docs/telemetry.md, "Cost").
 * The peers keep V8's defaults.
 *
 * CPUs: the coordinator (this process) runs alone on the last CPU, the peers and the sink on the
 * others (bench/cpu-pin.ts; BENCH_PIN=0 turns it off): in a deployment its peers are other machines,
 * and on two shared cores their load read as the coordinator's own cost.
 *
 * Knobs (environment): TELEMETRY_BENCH_ROUNDS (cycles), _ROUND_MS, _SETTLE_MS, _WARMUP_ROUNDS,
 * _CONCURRENCY; TELEMETRY_BENCH_TRACES_EXPORTER=none (spans recorded, not exported);
 * TELEMETRY_BENCH_PARTS=traces,metrics,recorder (which parts run); TELEMETRY_BENCH_VARIANTS=off,on
 * (interleave a subset, print, record nothing); TELEMETRY_BENCH_ONLY=on (one variant alone, for a
 * profile: `node --cpu-prof --import tsx bench/telemetry-grpc.bench.ts`, with
 * TELEMETRY_BENCH_CHILD_ARGS="--cpu-prof --cpu-prof-dir=d" for the peers; or
 * TELEMETRY_BENCH_PROFILE_DIR=d, which profiles the coordinator and every peer over the measured part
 * only, where --cpu-prof's profiles of a peer are mostly its start-up). With TELEMETRY_BENCH_PROFILE_DIR
 * and no _ONLY, each measured round of the coordinator is profiled on its own (its fan-outs in
 * d/fanouts.json): `npx tsx bench/profile-summary.ts --rounds d` prices each variant's categories
 * against "off"'s, interleaved as the costs are. The peers share a core, so a profile of one is wall
 * time, not its CPU.
 */
import { spawn } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { context, propagation, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import type { Context } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import { DEFAULT_V8_FLAGS, ensureV8Flags, parseV8Flags } from "../src/cli/heap-flags.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { Coordinator } from "../src/engine/coordinator.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { ChannelPool } from "../src/mesh/channel-pool.js";
import { GrpcTransport } from "../src/mesh/grpc-transport.js";
import type { PeerTransport } from "../src/engine/transport.js";
import { INSTRUMENTATION_SCOPE } from "../src/telemetry/attributes.js";
import { startTelemetry } from "../src/telemetry/sdk/setup.js";
import { SyncContextManager } from "../src/telemetry/sdk/sync-context-manager.js";
import { createTelemetry } from "../src/telemetry/telemetry.js";
import { recordFigures } from "./report.js";
import { pinSelf } from "./cpu-pin.js";
import type { CpuPin } from "./cpu-pin.js";
import { windowProfiler } from "./window-profiler.js";

const PEERS = 8;
const CONCURRENCY = Number(process.env.TELEMETRY_BENCH_CONCURRENCY ?? 8);
/**
 * Cycles: each runs every variant but "off" once, each followed by an "off" round. A multiple of the
 * Williams design's rows over those variants (6 for all six; n for n even, 2n for n odd).
 */
const ROUNDS = Number(process.env.TELEMETRY_BENCH_ROUNDS ?? 12);
/** The measured part of a round. */
const ROUND_MS = Number(process.env.TELEMETRY_BENCH_ROUND_MS ?? 2_000);
/**
 * Each round first runs its variant this long unmeasured, then measures ROUND_MS: a variant's steady
 * state, not its first moments after a switch. Those moments are not a node's: the rate-limiting
 * sampler's bucket fills while its variant is inactive, so an unsettled 1 s `on` round traced up to
 * twice the default rate (the burst, then the refill); and code paths the previous variant did not
 * run are cold again. The settle window is still timed, and its cost reported apart ("settle"). 0: the
 * method of the runs before it (1 s rounds, no settle window).
 */
const SETTLE_MS = Number(process.env.TELEMETRY_BENCH_SETTLE_MS ?? 1_000);
/** Unmeasured rounds per variant first, while the optimizing compiler catches up. */
const WARMUP_ROUNDS = Number(process.env.TELEMETRY_BENCH_WARMUP_ROUNDS ?? 4);
const PAYLOAD = { q: "bench", n: 1 };
/**
 * TELEMETRY_BENCH_CONTROL_SPIN_US: the control variant burns this much CPU per fan-out in the
 * coordinator (default 0, the A/A pair): what the method reads for a known added cost.
 */
const CONTROL_SPIN_US = Number(process.env.TELEMETRY_BENCH_CONTROL_SPIN_US ?? 0);
/**
 * TELEMETRY_BENCH_CONTROL_PEER_SPIN_US: in the control variant each peer burns this much CPU per branch
 * before it answers (default 0): what the coordinator's CPU per fan-out reads for a cost that is the
 * peers' alone.
 */
const CONTROL_PEER_SPIN_US = Number(process.env.TELEMETRY_BENCH_CONTROL_PEER_SPIN_US ?? 0);
const PROFILE_DIR = process.env.TELEMETRY_BENCH_PROFILE_DIR;
const profiler = windowProfiler(PROFILE_DIR);
const SCRIPT = fileURLToPath(new URL("./telemetry-peer.ts", import.meta.url));

interface Child {
  readonly child: ChildProcess;
  readonly port: number;
  cpu(): Promise<number>;
}

function startChild(pin: CpuPin, args: string[], env: Record<string, string>): Promise<Child> {
  // TELEMETRY_BENCH_CHILD_ARGS: node flags for the peers and the sink (e.g. "--cpu-prof --cpu-prof-dir=p";
  // Node 20 refuses --cpu-prof in NODE_OPTIONS).
  const flags = (process.env.TELEMETRY_BENCH_CHILD_ARGS ?? "").split(" ").filter((f) => f !== "");
  const [file, argv] = pin.wrap(process.execPath, [...flags, "--import", "tsx", SCRIPT, ...args]);
  const child = spawn(file, argv, {
    stdio: ["pipe", "pipe", "inherit"],
    env: { ...process.env, ...env },
  });
  let out = "";
  const cpuWaiters: ((us: number) => void)[] = [];
  return new Promise((resolve, reject) => {
    child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      let m: RegExpExecArray | null;
      while ((m = /CPU (\d+)\n/.exec(out)) !== null) {
        out = out.slice(m.index + m[0].length);
        cpuWaiters.shift()?.(Number(m[1]));
      }
      const p = /PORT (\d+)\n/.exec(out);
      if (p) {
        out = out.slice(p.index + p[0].length);
        resolve({
          child,
          port: Number(p[1]),
          cpu: () =>
            new Promise<number>((r) => {
              cpuWaiters.push(r);
              child.stdin.write("cpu\n");
            }),
        });
      }
    });
    child.on("exit", (code) => reject(new Error(`${args.join(" ")} exited with ${code}`)));
  });
}

const model = predicateModel<unknown, string>({
  prior: "none",
  decide: () => "answered",
  canFlip: () => true,
});

interface Variant {
  readonly fanOut: () => Promise<void>;
  /** Registers / removes the process-wide globals the variant needs (context manager, propagator). */
  activate(): void;
  deactivate(): void;
  /** Exports the spans the variant's batch processor still holds, so that their cost stays in its round. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

function restoreEnv(saved: Record<string, string | undefined>): void {
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
}

/** Fan-outs that ended with fewer answers than peers (deadline or abandon under load). */
let incomplete = 0;

function fanOutWith(
  c: Coordinator,
  peers: string[],
  spinUs = 0,
  payload: unknown = PAYLOAD,
): () => Promise<void> {
  return async () => {
    if (spinUs > 0) {
      const until = performance.now() + spinUs / 1000;
      while (performance.now() < until);
    }
    const o = await c.fanOut({ kind: "echo", payload }, { peers, budgetMs: 5_000, model });
    if (o.answered !== peers.length) incomplete++;
  };
}

/**
 * `spinUs`: CPU the coordinator burns per fan-out before it starts; `peerSpinUs`: CPU each peer burns per
 * branch (the calibrated controls).
 */
function off(
  transport: GrpcTransport,
  book: LatencyBook,
  peers: string[],
  spinUs = 0,
  peerSpinUs = 0,
): Variant {
  const c = new Coordinator({ transport, book, nodeId: "bench" });
  return {
    fanOut: fanOutWith(c, peers, spinUs, peerSpinUs > 0 ? { ...PAYLOAD, spinUs: peerSpinUs } : PAYLOAD),
    activate() {},
    deactivate() {},
    flush: async () => {},
    close: async () => {},
  };
}

/**
 * No SDK: each fan-out's branches carry an unsampled span context of their own, given to GrpcTransport
 * as `traceContext` (as instrumentTransport does), which it writes into the metadata through the propagator.
 */
function wire(transport: GrpcTransport, book: LatencyBook, peers: string[]): Variant {
  let lastFanout = "";
  let lastCtx: Context = ROOT_CONTEXT;
  // Random ids made as the node's tracer makes them (sampling-hints.ts): random words written into a
  // buffer and read out as hex, so that the variant prices the trace context, not the 48 one-character
  // strings a fan-out's ids cost when built a digit at a time.
  const buffer = Buffer.allocUnsafe(16);
  const hex = (bytes: 8 | 16): string => {
    for (let i = 0; i < bytes; i += 4) buffer.writeUInt32BE((Math.random() * 0x1_0000_0000) >>> 0, i);
    return buffer.toString("hex", 0, bytes);
  };
  const wrapped: PeerTransport = {
    branch(peer, req, opts) {
      if (req.fanoutId !== lastFanout) {
        lastFanout = req.fanoutId;
        lastCtx = trace.setSpanContext(ROOT_CONTEXT, {
          traceId: hex(16),
          spanId: hex(8),
          traceFlags: TraceFlags.NONE,
        });
      }
      return transport.branch(peer, req, { ...opts, traceContext: lastCtx });
    },
  };
  const c = new Coordinator({ transport: wrapped, book, nodeId: "bench" });
  const propagator = new W3CTraceContextPropagator();
  return {
    fanOut: fanOutWith(c, peers),
    activate() {
      context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
      propagation.setGlobalPropagator(propagator);
    },
    deactivate() {
      context.disable();
      propagation.disable();
    },
    flush: async () => {},
    close: async () => {},
  };
}

/**
 * The SDK starts once (providers, exporters, their channels and timers live through the run); the
 * globals that make it active for the whole process — the AsyncLocalStorage context manager and the
 * W3C propagator — are registered for "on" rounds and removed for "off" rounds.
 */
async function on(
  transport: GrpcTransport,
  book: LatencyBook,
  peers: string[],
  env: Record<string, string> = {},
  contextManager: "async-hooks" | "sync" = "async-hooks",
): Promise<Variant> {
  // The tracer provider reads OTEL_TRACES_SAMPLER* from process.env when it is built.
  const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
  Object.assign(process.env, env);
  const sdk = await startTelemetry({ serviceName: "tailswarm-bench", serviceInstanceId: "coordinator" });
  restoreEnv(saved);
  // TELEMETRY_BENCH_PARTS=traces|metrics|recorder (comma list): only these parts of the node's
  // telemetry in the "on"-like variants, to price each apart. Default: all three, as a node runs.
  const parts = (process.env.TELEMETRY_BENCH_PARTS ?? "traces,metrics,recorder").split(",");
  const t = createTelemetry({
    estimates: book,
    tracer: sdk.tracerProvider.getTracer(INSTRUMENTATION_SCOPE),
    meter: sdk.meterProvider.getMeter(INSTRUMENTATION_SCOPE),
    tracing: parts.includes("traces"),
    metrics: parts.includes("metrics"),
    recorderCapacity: parts.includes("recorder") ? 256 : 0,
    sampling: sdk.sampling, // as the node passes it
  });
  const c = new Coordinator({
    transport: t.wrapTransport(transport),
    book,
    nodeId: "bench",
    observer: t.observer,
  });
  const propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
  });
  return {
    fanOut: fanOutWith(c, peers),
    activate() {
      context.setGlobalContextManager(
        contextManager === "sync"
          ? new SyncContextManager().enable()
          : new AsyncLocalStorageContextManager().enable(),
      );
      propagation.setGlobalPropagator(propagator);
    },
    deactivate() {
      context.disable();
      propagation.disable();
    },
    flush: () => sdk.tracerProvider.forceFlush(),
    close: async () => {
      t.close();
      await sdk.shutdown();
    },
  };
}

const now = (): number => performance.timeOrigin + performance.now();

/**
 * Rows of a Williams Latin square for `n` treatments (n rows when n is even, 2n when odd): each
 * treatment appears once per row, in each position equally often, and immediately after each other
 * treatment equally often, so that what a round leaves behind (garbage, warm caches, a peer's export)
 * falls on every variant alike.
 */
export function williams(n: number): number[][] {
  const first: number[] = [];
  for (let i = 0, lo = 0, hi = n - 1; i < n; i++) first.push(i % 2 === 0 ? lo++ : hi--);
  const rows = Array.from({ length: n }, (_, r) => first.map((x) => (x + r) % n));
  return n % 2 === 0 ? rows : [...rows, ...rows.map((row) => [...row].reverse())];
}

async function closedLoop(f: () => Promise<void>, ms: number): Promise<number> {
  const end = now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (now() < end) {
        await f();
        done++;
      }
    }),
  );
  return done;
}

export async function run(): Promise<void> {
  ensureV8Flags(); // returns only in a process that has them (or cannot restart: it says so)
  const load0 = loadavg();
  const pin = pinSelf();
  const sink = await startChild(pin, ["sink"], {});
  const otel: Record<string, string> = {
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    // TELEMETRY_BENCH_TRACES_EXPORTER=none: spans recorded but not exported (isolates the export cost)
    OTEL_TRACES_EXPORTER: process.env.TELEMETRY_BENCH_TRACES_EXPORTER ?? "otlp",
    OTEL_METRICS_EXPORTER: "otlp", // default export interval (60 s), as a node runs
  };
  const peers = await Promise.all(
    Array.from({ length: PEERS }, (_, i) =>
      startChild(pin, ["peer", `peer-${i}`], { ...otel, OTEL_TRACES_SAMPLER: "parentbased_always_off" }),
    ),
  );
  const addresses = peers.map((p) => `127.0.0.1:${p.port}`);
  const saved = Object.fromEntries(Object.keys(otel).map((k) => [k, process.env[k]]));
  Object.assign(process.env, otel); // the OTLP exporters read process.env
  const pool = new ChannelPool();
  const transport = new GrpcTransport({ pool });
  const book = new LatencyBook({ windowMs: 10_000, minSamples: 20 });
  const peersCpu = async (): Promise<number> =>
    (await Promise.all(peers.map((p) => p.cpu()))).reduce((a, b) => a + b, 0);
  const names = ["off", "control", "wire", "untraced", "on", "sync", "always"] as const;
  type Name = (typeof names)[number];
  /**
   * TELEMETRY_BENCH_VARIANTS=off,on: interleave only these (off is always one), print the paired costs
   * and record nothing. TELEMETRY_BENCH_ONLY=<variant>: run that variant alone for ROUNDS × ROUND_MS
   * (for `--cpu-prof`; TELEMETRY_BENCH_CHILD_ARGS gives the peers node flags), print its CPU.
   */
  const picked = (process.env.TELEMETRY_BENCH_VARIANTS ?? names.join(",")).split(",").map((v) => v.trim());
  const only = process.env.TELEMETRY_BENCH_ONLY;
  for (const v of [...picked, ...(only === undefined ? [] : [only])]) {
    if (!(names as readonly string[]).includes(v)) {
      throw new Error(`TELEMETRY_BENCH_VARIANTS/ONLY: got "${v}", expected one of ${names.join(", ")}`);
    }
  }
  const running = names.filter((n) => n === "off" || picked.includes(n));
  const complete = running.length === names.length;
  /** A round's figures: fan-outs/s, and CPU µs per fan-out of the coordinator and of the peers summed. */
  interface Figures {
    readonly rate: number;
    readonly cpu: number;
    readonly peer: number;
    /** Fan-outs/s in the settle window before the measured part (NaN without one). */
    readonly settleRate: number;
  }
  /** A variant's round with its baseline: the mean of the two "off" rounds on either side of it. */
  interface Paired extends Figures {
    readonly base: Figures;
  }
  const rounds = Object.fromEntries(names.map((n) => [n, [] as Paired[]])) as Record<Name, Paired[]>;
  const totals = {
    off: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    control: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    wire: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    untraced: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    on: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    sync: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
    always: { n: 0, ms: 0, cpu: 0, peerCpu: 0 },
  };
  const build: Record<Name, () => Variant | Promise<Variant>> = {
    off: () => off(transport, book, addresses),
    control: () => off(transport, book, addresses, CONTROL_SPIN_US, CONTROL_PEER_SPIN_US),
    wire: () => wire(transport, book, addresses),
    untraced: () => on(transport, book, addresses, { OTEL_TRACES_SAMPLER: "parentbased_always_off" }),
    on: () => on(transport, book, addresses),
    sync: () => on(transport, book, addresses, {}, "sync"),
    always: () => on(transport, book, addresses, { OTEL_TRACES_SAMPLER: "parentbased_always_on" }),
  };
  // Only the variants this run measures: another's SDK would still export its metrics on its timer,
  // inside whichever round was running.
  const variants = {} as Record<Name, Variant>;
  for (const n of only === undefined ? running : [only as Name]) variants[n] = await build[n]();
  for (const v of Object.values(variants)) v.deactivate();
  try {
    if (only !== undefined) {
      const v = variants[only as Name];
      v.activate();
      await closedLoop(v.fanOut, WARMUP_ROUNDS * ROUND_MS);
      const p0 = await peersCpu();
      for (const p of peers) p.child.stdin?.write("profile-start\n");
      profiler.start();
      const c0 = process.cpuUsage();
      const n = await closedLoop(v.fanOut, ROUNDS * ROUND_MS);
      await v.flush();
      const c1 = process.cpuUsage(c0);
      profiler.stop(`coordinator-${only}`);
      for (const p of peers) p.child.stdin?.write("profile-stop\n");
      const p1 = await peersCpu();
      v.deactivate();
      console.log(
        `${only}: ${n} fan-outs, coordinator ${((c1.user + c1.system) / n).toFixed(0)} µs CPU/fan-out, peers ${((p1 - p0) / n).toFixed(0)} µs, load ${loadavg()[0]!.toFixed(2)}`,
      );
      return;
    }
    /**
     * With TELEMETRY_BENCH_PROFILE_DIR, each measured round's coordinator profile, with its fan-outs in
     * fanouts.json (bench/profile-summary.ts --rounds reads them by variant).
     */
    let roundNo = 0;
    const profiledFanouts: Record<string, number> = {};
    /** One round of `name`, measured: fan-outs/s, coordinator and peers' CPU per fan-out. */
    const measure = async (name: Name): Promise<Figures> => {
      const v = variants[name];
      v.activate();
      let settleRate = NaN;
      if (SETTLE_MS > 0) {
        const s0 = now();
        const ns = await closedLoop(v.fanOut, SETTLE_MS);
        settleRate = (ns / (now() - s0)) * 1000;
      }
      const p0 = await peersCpu();
      const profiled = `coordinator-${name}-${++roundNo}`;
      profiler.start();
      const c0 = process.cpuUsage();
      const t0 = now();
      const n = await closedLoop(v.fanOut, ROUND_MS);
      const t1 = now();
      // Spans still batched are exported now, in their own round (peers: before they report CPU).
      await v.flush();
      const c1 = process.cpuUsage(c0);
      profiler.stop(profiled);
      profiledFanouts[profiled] = n;
      const p1 = await peersCpu();
      v.deactivate();
      const tot = totals[name];
      tot.n += n;
      tot.ms += t1 - t0;
      tot.cpu += c1.user + c1.system;
      tot.peerCpu += p1 - p0;
      return {
        rate: (n / (t1 - t0)) * 1000,
        cpu: (c1.user + c1.system) / n,
        peer: (p1 - p0) / n,
        settleRate,
      };
    };
    for (let r = 0; r < WARMUP_ROUNDS; r++) {
      for (const name of running) {
        variants[name].activate();
        await closedLoop(variants[name].fanOut, ROUND_MS);
        await variants[name].flush();
        variants[name].deactivate();
      }
    }
    await peersCpu(); // the peers export what the warm-up left
    // A chain off, X, off, Y, off, …: every variant's round sits between two "off" rounds and is read
    // against their mean, which takes out the machine's drift over the seconds around it (it moves far
    // more than telemetry costs). The others take turns in a Williams design: over its rows each runs
    // in every position of a cycle, and after each other one's "off" round, equally often.
    const others = running.filter((n) => n !== "off");
    const orders = williams(Math.max(1, others.length));
    let before = await measure("off");
    for (let r = 0; r < ROUNDS; r++) {
      if (others.length === 0) await measure("off");
      for (const i of others.length === 0 ? [] : orders[r % orders.length]!) {
        const name = others[i]!;
        const x = await measure(name);
        const after = await measure("off");
        const base = {
          rate: (before.rate + after.rate) / 2,
          cpu: (before.cpu + after.cpu) / 2,
          peer: (before.peer + after.peer) / 2,
          settleRate: (before.settleRate + after.settleRate) / 2,
        };
        rounds[name].push({ ...x, base });
        before = after;
      }
    }
    if (PROFILE_DIR !== undefined && PROFILE_DIR !== "") {
      mkdirSync(PROFILE_DIR, { recursive: true });
      writeFileSync(join(PROFILE_DIR, "fanouts.json"), JSON.stringify(profiledFanouts, null, 1));
    }
  } finally {
    for (const v of Object.values(variants)) await v.close();
    transport.close();
    pool.closeAll();
    restoreEnv(saved);
    for (const c of [...peers, sink]) c.child.stdin!.end();
  }
  const load1 = loadavg();
  const heapFlags =
    parseV8Flags(process.env.TAILSWARM_V8_FLAGS ?? DEFAULT_V8_FLAGS).join(" ") || "V8's defaults";
  const rate = (t: typeof totals.on): number => (t.n / t.ms) * 1000;
  const cpuPer = (t: typeof totals.on): number => t.cpu / t.n;
  const peerPer = (t: typeof totals.on): number => t.peerCpu / t.n;
  /**
   * Each round's cost in %, against the mean of the "off" rounds on either side of it, sorted. Costs are
   * medians of these: totals over the run would be dominated by the machine's drift.
   */
  type Key = "rate" | "cpu" | "peer" | "total" | "settle";
  /** One round's cost in %, against its base. */
  const roundCost = (x: Paired, key: Key): number => {
    const base = x.base;
    if (key === "rate") return (1 - x.rate / base.rate) * 100;
    if (key === "settle") return (1 - x.settleRate / base.settleRate) * 100;
    if (key === "total") return ((x.cpu + x.peer) / (base.cpu + base.peer) - 1) * 100;
    return (x[key] / base[key] - 1) * 100;
  };
  const paired = (name: Exclude<Name, "off">, key: Key): number[] =>
    rounds[name].map((x) => roundCost(x, key)).sort((a, b) => a - b);
  const median = (sorted: readonly number[]): number => sorted[Math.floor(sorted.length / 2)]!;
  const cost = (name: Exclude<Name, "off">, key: Key): number => median(paired(name, key));
  /**
   * A 95% bootstrap interval of the median of per-round costs (a variant's paired ratios, or `beyond`'s
   * differences; rounds resampled with replacement): how far this run's figure could be from the
   * method's own answer, given how much the rounds moved. Seeded, so the same rounds give the same
   * interval.
   */
  const intervalOf = (ratios: readonly number[], unit = "%"): string => {
    let seed = 0x2545f491;
    const random = (): number => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const medians: number[] = [];
    for (let b = 0; b < 2000; b++) {
      medians.push(
        median(ratios.map(() => ratios[Math.floor(random() * ratios.length)]!).sort((x, y) => x - y)),
      );
    }
    medians.sort((x, y) => x - y);
    return `${medians[50]!.toFixed(1)} .. ${medians[1949]!.toFixed(1)} ${unit}`;
  };
  const interval = (name: Exclude<Name, "off">): string => intervalOf(paired(name, "rate"));
  /**
   * Per cycle, `a`'s throughput cost minus `b`'s (each against the off rounds either side of it), sorted:
   * what `a` adds to `b`. Rounds are pushed once per cycle, so index i of each is the same cycle.
   */
  const beyond = (a: Exclude<Name, "off">, b: Exclude<Name, "off">): number[] => {
    const n = Math.min(rounds[a].length, rounds[b].length);
    return Array.from(
      { length: n },
      (_, i) => roundCost(rounds[a][i]!, "rate") - roundCost(rounds[b][i]!, "rate"),
    ).sort((x, y) => x - y);
  };
  /**
   * Per round, the coordinator's CPU per fan-out minus the mean of the "off" rounds on either side of
   * it, µs, sorted: the cost in CPU per operation, which a ratio of two noisy rates hides.
   */
  const cpuDiff = (name: Exclude<Name, "off">): number[] =>
    rounds[name].map((x) => x.cpu - x.base.cpu).sort((a, b) => a - b);
  /** "median (95% interval a .. b)" of `name`'s paired coordinator CPU difference, µs per fan-out. */
  const cpuDiffText = (name: Exclude<Name, "off">): string => {
    const d = cpuDiff(name);
    return `${median(d).toFixed(1)} µs (95% interval ${intervalOf(d, "µs")})`;
  };
  /** The interquartile range of the same paired ratios: how far apart the rounds were. */
  const spread = (name: Exclude<Name, "off">, key: "rate" | "cpu" | "total"): string => {
    const ratios = paired(name, key);
    const q = (f: number): string => ratios[Math.floor((ratios.length - 1) * f)]!.toFixed(1);
    return `rounds' interquartile range ${q(0.25)} .. ${q(0.75)} %`;
  };
  if (!complete) {
    console.table(
      Object.fromEntries(
        running.map((name) => [
          name,
          {
            "fan-outs/s": Number(rate(totals[name]).toFixed(1)),
            "coord µs": Number(cpuPer(totals[name]).toFixed(0)),
            "peers µs": Number(peerPer(totals[name]).toFixed(0)),
            ...(name === "off"
              ? {}
              : {
                  "wall %": Number(cost(name, "rate").toFixed(1)),
                  "wall 95% CI": interval(name),
                  "coord %": Number(cost(name, "cpu").toFixed(1)),
                  "peers %": Number(cost(name, "peer").toFixed(1)),
                  "total CPU %": Number(cost(name, "total").toFixed(1)),
                  ...(SETTLE_MS > 0 ? { "settle wall %": Number(cost(name, "settle").toFixed(1)) } : {}),
                }),
          },
        ]),
      ),
    );
    const offCpu = cpuPer(totals.off).toFixed(0);
    for (const name of running) {
      if (name === "off") continue;
      console.log(
        `coordinator CPU per fan-out, off / ${name}, µs: ${offCpu} / ${cpuPer(totals[name]).toFixed(0)} (paired difference ${cpuDiffText(name)})`,
      );
    }
    if (running.includes("wire") && running.includes("on")) {
      const d = beyond("on", "wire");
      console.log(`on beyond wire, per cycle: ${median(d).toFixed(1)} % (95% interval ${intervalOf(d)})`);
    }
    console.log(
      `load average ${load0[0]!.toFixed(2)} → ${load1[0]!.toFixed(2)}; CPUs: ${pin.label}; coordinator's heap flags: ${heapFlags}`,
    );
    return;
  }
  const onBeyondWire = beyond("on", "wire");
  const note = `${PEERS} peer processes, ${CONCURRENCY} fan-outs in flight, ${ROUNDS} rounds per variant of ${ROUND_MS} ms measured after ${SETTLE_MS} ms settling, each between two off rounds, after ${WARMUP_ROUNDS} warm-up rounds each; CPUs: ${pin.label}; coordinator's heap flags: ${heapFlags}`;
  recordFigures("telemetry-grpc", {
    "fan-outs/s, telemetry off (gRPC, 8 peers)": { value: rate(totals.off), unit: "1/s", note },
    "fan-outs/s, telemetry on (default sampling: ≤ 10 new traces/s, OTLP/gRPC)": {
      value: rate(totals.on),
      unit: "1/s",
    },
    "throughput cost of telemetry (wall)": {
      value: cost("on", "rate"),
      unit: "%",
      target: 5,
      note: `median over rounds of the ratio to the mean of the off rounds on either side; wall clock on a shared machine; 95% bootstrap interval ${interval("on")}; ${spread("on", "rate")}`,
    },
    ...(SETTLE_MS > 0
      ? {
          "throughput cost of telemetry right after switching it on (settle window, wall)": {
            value: cost("on", "settle"),
            unit: "%",
            note: `the first ${SETTLE_MS} ms of each on round, against the same window of the off rounds on either side: the switching transient, which the rounds' measured part leaves out; A/A control ${cost("control", "settle").toFixed(1)} %`,
          },
        }
      : {}),
    "A/A control: off against off again (wall)": {
      value: cost("control", "rate"),
      unit: "%",
      note: `what this method reads for no difference; 95% bootstrap interval ${interval("control")}; ${spread("control", "rate")}`,
    },
    "A/A control: total CPU": {
      value: cost("control", "total"),
      unit: "%",
      note: spread("control", "total"),
    },
    "coordinator CPU per fan-out, off": { value: cpuPer(totals.off), unit: "µs" },
    "coordinator CPU per fan-out, on": { value: cpuPer(totals.on), unit: "µs" },
    "coordinator CPU cost of telemetry": {
      value: cost("on", "cpu"),
      unit: "%",
      target: 5,
      note: `user+system CPU of the coordinator process; ${spread("on", "cpu")}`,
    },
    "coordinator CPU per fan-out, on minus off (paired)": {
      value: median(cpuDiff("on")),
      unit: "µs",
      note: `median over rounds of on's CPU per fan-out minus the mean of the off rounds on either side; 95% bootstrap interval ${intervalOf(cpuDiff("on"), "µs")}; A/A control ${cpuDiffText("control")}`,
    },
    "total CPU cost of telemetry (coordinator + peers)": {
      value: cost("on", "total"),
      unit: "%",
      target: 5,
      note: `what the throughput cost comes to when these processes share all the cores; ${spread("on", "total")}`,
    },
    "throughput cost of sending the trace context alone (wire)": {
      value: cost("wire", "rate"),
      unit: "%",
      note: `no SDK; an unsampled traceparent in every branch's metadata, extracted by the peers; 95% bootstrap interval ${interval("wire")}; ${spread("wire", "rate")}`,
    },
    "peers' CPU cost of the trace context alone (wire)": { value: cost("wire", "peer"), unit: "%" },
    "throughput cost of telemetry beyond the trace context (on against wire)": {
      value: median(onBeyondWire),
      unit: "%",
      note: `per cycle, on's cost minus wire's: what the SDK, metrics, flight recorder and traces add to the propagation issue 4 requires (a split of the cost, not the target); 95% bootstrap interval ${intervalOf(onBeyondWire)}`,
    },
    "throughput cost of telemetry with no fan-out traced (untraced)": {
      value: cost("untraced", "rate"),
      unit: "%",
      note: `"on" with OTEL_TRACES_SAMPLER=parentbased_always_off: metrics, flight recorder and the unsampled trace context, no span recorded; 95% bootstrap interval ${interval("untraced")}; ${spread("untraced", "rate")}`,
    },
    "total CPU cost of telemetry with no fan-out traced (untraced)": {
      value: cost("untraced", "total"),
      unit: "%",
      note: spread("untraced", "total"),
    },
    "throughput cost of telemetry, sync context manager (wall)": {
      value: cost("sync", "rate"),
      unit: "%",
      note: `"on" with telemetry.contextManager: sync in the coordinator; ${spread("sync", "rate")}`,
    },
    "coordinator CPU cost of telemetry, sync context manager": {
      value: cost("sync", "cpu"),
      unit: "%",
      note: spread("sync", "cpu"),
    },
    "total CPU cost of telemetry, sync context manager": {
      value: cost("sync", "total"),
      unit: "%",
      note: spread("sync", "total"),
    },
    "fan-outs/s, every fan-out traced (parentbased_always_on)": { value: rate(totals.always), unit: "1/s" },
    "throughput cost of telemetry, every fan-out traced (wall)": {
      value: cost("always", "rate"),
      unit: "%",
      note: `OTEL_TRACES_SAMPLER=parentbased_always_on: 17 spans recorded and exported per fan-out; ${spread("always", "rate")}`,
    },
    "coordinator CPU per fan-out, every fan-out traced": { value: cpuPer(totals.always), unit: "µs" },
    "coordinator CPU cost of telemetry, every fan-out traced": { value: cost("always", "cpu"), unit: "%" },
    "total CPU cost of telemetry, every fan-out traced": {
      value: cost("always", "total"),
      unit: "%",
      note: spread("always", "total"),
    },
    "peers' CPU per fan-out (8 summed), off": { value: peerPer(totals.off), unit: "µs" },
    "peers' CPU per fan-out (8 summed), on": { value: peerPer(totals.on), unit: "µs" },
    "peers' CPU cost of telemetry": {
      value: cost("on", "peer"),
      unit: "%",
      note: "Branch server spans recorded and exported by the peers",
    },
    "fan-outs with fewer than 8 answers": { value: incomplete, unit: "{fanout}" },
    "load average (1 min) at start / end": {
      value: load0[0]!,
      unit: "load",
      note: `end ${load1[0]!.toFixed(2)}; 5 min ${load0[1]!.toFixed(2)} → ${load1[1]!.toFixed(2)}`,
    },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
