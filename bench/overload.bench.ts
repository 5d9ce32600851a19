/**
 * A coordinator under a burst it cannot serve: a coordinator and three vote peers, each
 * `node dist/cli/main.js node`, on loopback. First the sustainable rate: for OVERLOAD_WARM_S seconds
 * (default 5), coordinate.maxConcurrent callers each send Coordinates back to back (1 s deadline);
 * answered per second is the rate. Then OVERLOAD_CALLS (default 10,000) Coordinates at once, 5 s
 * deadlines, over 48 connections (a connection may carry at most connections.maxConcurrentStreams
 * calls at once: 48 × 256 holds 10,000). The calls are plain HTTP/2 requests with a `grpc-timeout`
 * (test/support/raw-grpc.ts), not grpc-js client calls: a grpc-js client spends more CPU per call than
 * the node spends refusing it, lags, and then reads in-time answers late. A call is timed from its
 * request to its status; one the node does not answer by deadline + 2 s is given up (GAVE_UP). An OK reply whose fan-out no peer answered (`no_answer`, the prior sent in
 * time) counts as answered, not as served.
 * Reported: calls answered (ok or RESOURCE_EXHAUSTED) by their deadline + 100 ms, the codes, the rate
 * served during the burst (ok calls over the time to the last ok answer) against the sustainable one,
 * and the coordinator's peak RSS during the burst (VmHWM, reset before it) against its idle RSS. The
 * CPU the burst cost the coordinator and this (client) process, and this process's event-loop delay,
 * show which side was the bottleneck: a client that lags reads answers late. Needs `npm run build`.
 *
 *   npm run build && npm run bench -- overload
 *
 * OVERLOAD_NODE_ARGS="--coordinate-max-queue 1024" gives the coordinator extra flags (space-separated);
 * OVERLOAD_NODE_FLAGS="--cpu-prof" gives its Node/V8 flags; the nodes start with the V8 heap flags
 * `tailswarm node` sets (src/cli/heap-flags.ts) unless TAILSWARM_V8_FLAGS, passed through, says
 * otherwise (TAILSWARM_V8_FLAGS= for V8's defaults); MALLOC_ARENA_MAX and GLIBC_TUNABLES are passed
 * through, so that glibc's arena limit can be compared (MALLOC_ARENA_MAX=2 against unset).
 * OVERLOAD_MEMORY=1 preloads bench/memory-probe.ts in the coordinator and prints what its RSS is made
 * of idle (before any call), 2 s after the sustainable phase and at the burst's highest RSS (the probe costs CPU: its runs'
 * CPU figures do not count).
 * OVERLOAD_PROFILE_DIR=dir writes the coordinator's CPU profile of the whole run there (it is stopped
 * with SIGTERM, then); read it with bench/profile-summary.ts.
 * OVERLOAD_HEAP_DIR=dir writes two heap snapshots of the coordinator there: 2 s after the sustainable
 * phase, and OVERLOAD_HEAP_AT_MS (default 300) ms into the burst, taken on a signal, so while the node is
 * reading the burst, not between two turns of its event loop; read them with bench/heap-summary.ts. Writing
 * one stops the node for a second or more and takes memory: such a run's other figures do not count.
 */
import { execFileSync, spawn } from "node:child_process";
import * as http2 from "node:http2";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { status as Status } from "@grpc/grpc-js";
import { swarmService } from "../src/mesh/proto.js";
import { NodeClient } from "../src/node/client.js";
import { GAVE_UP, grpcFrame, rawUnary } from "../test/support/raw-grpc.js";
import type { RawStatus } from "../test/support/raw-grpc.js";
import type { MemorySample } from "./memory-probe.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const ROOT = join(fileURLToPath(import.meta.url), "..", "..");
const MAIN = join(ROOT, "dist", "cli", "main.js");
const CALLS = Number(process.env.OVERLOAD_CALLS ?? 10_000);
const WARM_S = Number(process.env.OVERLOAD_WARM_S ?? 5);
const DEADLINE_MS = 5_000;
const CONNECTIONS = 48;
const WARM_CALLERS = 64;
const PEERS = 3;
const PROFILE_DIR = process.env.OVERLOAD_PROFILE_DIR;
const HEAP_DIR = process.env.OVERLOAD_HEAP_DIR;
const HEAP_AT_MS = Number(process.env.OVERLOAD_HEAP_AT_MS ?? 300);
const MEMORY_DIR = process.env.OVERLOAD_MEMORY === "1" ? mkdtempSync(join(tmpdir(), "overload-")) : undefined;
const MEMORY_FILE = MEMORY_DIR === undefined ? undefined : join(MEMORY_DIR, "memory.jsonl");
const OK: number = Status.OK;
const RESOURCE_EXHAUSTED: number = Status.RESOURCE_EXHAUSTED;

interface Proc {
  readonly child: ChildProcess;
  readonly address: string;
}

async function start(
  name: string,
  args: string[],
  nodeArgs: string[] = [],
  extraEnv: Record<string, string> = {},
): Promise<Proc> {
  const child = spawn(
    process.execPath,
    [...nodeArgs, MAIN, "node", "--node-id", name, "--listen", "127.0.0.1:0", ...args],
    {
      env: {
        PATH: process.env.PATH ?? "",
        NODE_ENV: "production",
        OTEL_TRACES_EXPORTER: "none",
        OTEL_METRICS_EXPORTER: "none",
        ...Object.fromEntries(
          Object.entries(process.env).filter(([k]) => k === "MALLOC_ARENA_MAX" || k === "GLIBC_TUNABLES"),
        ),
        ...(process.env.TAILSWARM_V8_FLAGS === undefined
          ? {}
          : { TAILSWARM_V8_FLAGS: process.env.TAILSWARM_V8_FLAGS }),
        ...extraEnv,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  const address = await new Promise<string>((resolve, reject) => {
    let buf = "";
    child.stderr.on("data", (d: Buffer) => {
      buf = (buf + d.toString()).slice(-100_000);
      const m = /"address":"([^"]+)".*"msg":"listening"/.exec(buf);
      if (m !== null) resolve(m[1]!);
    });
    child.once("exit", (code) => reject(new Error(`${name} exited ${code}: ${buf.slice(-500)}`)));
  });
  return { child, address };
}

const rssMiB = (p: Proc, key: "VmRSS" | "VmHWM"): number =>
  Number(new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${p.child.pid}/status`, "utf8"))?.[1]) /
  1024;

/** CPU time (user + system) of a process so far, ms (/proc/PID/stat, clock ticks of 10 ms). */
const cpuMs = (p: Proc): number => {
  const fields = readFileSync(`/proc/${p.child.pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * 10;
};

/** The q-quantile of ascending `sorted` (nearest rank); 0 when empty. */
const quantile = (sorted: readonly number[], q: number): number =>
  sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** One Coordinate's gRPC frame (the same request for every call). */
const coordinateFrame = (): Buffer =>
  grpcFrame(
    swarmService().Coordinate.requestSerialize({
      kind: "vote",
      payload: Buffer.from(JSON.stringify({ question: "ship?" })),
      required: PEERS,
    }),
  );

/** An OK reply with an answer the peers gave: not the prior sent for a fan-out no peer answered. */
const isServed = (r: RawStatus): boolean =>
  r.code === OK &&
  r.body.length > 5 &&
  (swarmService().Coordinate.responseDeserialize(r.body.subarray(5)) as { noAnswer?: boolean }).noAnswer !==
    true;

/** A Coordinate as a plain HTTP/2 request, given up at its deadline + 2 s. */
const coordinate = (
  session: http2.ClientHttp2Session,
  frame: Buffer,
  deadlineMs: number,
): Promise<RawStatus> =>
  rawUnary(session, swarmService().Coordinate.path, frame, {
    timeoutMs: deadlineMs,
    giveUpMs: deadlineMs + 2_000,
  });

/**
 * Where the OK calls answered past deadline + 100 ms spent their time, by the reply's own timing:
 * `before` the handler (the read stall the node took off the timeout, then the request read and
 * decoded), `queued` for a slot, the `fanout` (decide and wait), building the `reply`, and `after`: what
 * the node did not see — the request's wait before its headers were read beyond the stall it took off,
 * and the reply's way out until the client read its status. `slack`: the time the node had left to its
 * deadline for the call when it handed the reply to gRPC; `client`: the call's time as the client saw it.
 */
function printLateness(results: readonly RawStatus[]): void {
  const late = results.filter((r) => r.code === OK && r.ms > DEADLINE_MS + 100);
  if (late.length === 0) return;
  const parts = late.map((r) => {
    const reply = swarmService().Coordinate.responseDeserialize(r.body.subarray(5)) as {
      elapsedMs: number;
      timing?: {
        arrivalLeftMs: number;
        queuedMs: number;
        replyMs: number;
        reserveMs: number;
        reserveLoopMs: number;
      };
    };
    const t = reply.timing!;
    const before = DEADLINE_MS - t.arrivalLeftMs;
    const after = r.ms - before - t.queuedMs - reply.elapsedMs - t.replyMs;
    const slack = t.arrivalLeftMs - t.queuedMs - reply.elapsedMs - t.replyMs;
    return {
      before,
      queued: t.queuedMs,
      fanout: reply.elapsedMs,
      reply: t.replyMs,
      after,
      slack,
      reserve: t.reserveMs,
      loop: t.reserveLoopMs,
      client: r.ms,
    };
  });
  const row = (k: keyof (typeof parts)[number]): Record<string, string> => {
    const v = parts.map((p) => p[k]).sort((a, b) => a - b);
    return Object.fromEntries([0.5, 0.9, 1].map((q) => [`p${q * 100}`, quantile(v, q).toFixed(0)]));
  };
  console.log(
    `late ok: ${late.length}, ms by part (reply timing; reserve kept, its event-loop lateness part):`,
  );
  console.table(
    Object.fromEntries(
      (["before", "queued", "fanout", "reply", "after", "slack", "reserve", "loop", "client"] as const).map(
        (k) => [k, row(k)],
      ),
    ),
  );
}

/**
 * The coordinator's memory (bench/memory-probe.ts) idle before any call, just before the burst and at
 * its highest RSS in it.
 */
function printMemory(file: string, idleAt: number, burstStart: number): void {
  const samples = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as MemorySample);
  const idle = samples.filter((s) => s.at <= idleAt).at(-1);
  const before = samples.filter((s) => s.at < burstStart).at(-1);
  const peak = samples
    .filter((s) => s.at >= burstStart)
    .reduce<MemorySample | undefined>((a, s) => (a === undefined || s.rss > a.rss ? s : a), undefined);
  const row = (s: MemorySample | undefined): Record<string, string> =>
    s === undefined
      ? {}
      : Object.fromEntries(Object.entries(s).flatMap(([k, v]) => (k === "at" ? [] : [[k, v.toFixed(1)]])));
  console.log("coordinator memory, MiB (bench/memory-probe.ts says what each is):");
  console.table({
    "idle, before any call": row(idle),
    "after the sustainable phase": row(before),
    "burst, highest RSS": row(peak),
  });
}

export async function run(): Promise<void> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: npm run build first`);
  console.log(`uptime: ${execFileSync("uptime").toString().trim()}`);
  const procs: Proc[] = [];
  const sessions: http2.ClientHttp2Session[] = [];
  const frame = coordinateFrame();
  try {
    for (let i = 0; i < PEERS; i++) procs.push(await start(`peer-${i}`, []));
    const coord = await start(
      "coordinator",
      [
        "--peers",
        procs.map((p) => p.address).join(","),
        "--probe-interval-ms",
        "1000",
        ...(process.env.OVERLOAD_NODE_ARGS ?? "").split(" ").filter((a) => a !== ""),
      ],
      [
        ...(PROFILE_DIR === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${PROFILE_DIR}`]),
        ...(HEAP_DIR === undefined ? [] : ["--heapsnapshot-signal=SIGUSR2", `--diagnostic-dir=${HEAP_DIR}`]),
        ...(MEMORY_FILE === undefined ? [] : ["--import", join(ROOT, "bench", "memory-probe.ts")]),
        ...(process.env.OVERLOAD_NODE_FLAGS ?? "").split(" ").filter((a) => a !== ""),
      ],
      MEMORY_FILE === undefined ? {} : { MEMORY_PROBE_FILE: MEMORY_FILE },
    );
    procs.push(coord);
    const status = new NodeClient(coord.address);
    for (let i = 0; i < 100 && (await status.status()).peers.filter((p) => p.up).length < PEERS; i++)
      await sleep(100);
    status.close();
    for (let i = 0; i < CONNECTIONS; i++) {
      const session = http2.connect(`http://${coord.address}`);
      session.on("error", () => undefined);
      sessions.push(session);
    }
    console.log(`peers up; idle`);
    await sleep(3_000);
    const idle = rssMiB(coord, "VmRSS");
    const idleAt = Date.now();

    // Sustainable rate: as many callers as the coordinator runs at once, back to back.
    let served = 0;
    const warmCpu0 = cpuMs(coord);
    const warmEnd = Date.now() + WARM_S * 1000;
    await Promise.all(
      Array.from({ length: WARM_CALLERS }, async (_, i) => {
        while (Date.now() < warmEnd) {
          const r = await coordinate(sessions[i % CONNECTIONS]!, frame, 1_000);
          if (isServed(r)) served++;
        }
      }),
    );
    const sustainable = served / WARM_S;
    const warmCpuMs = cpuMs(coord) - warmCpu0;
    console.log(`sustainable: ${sustainable.toFixed(1)} calls/s; burst of ${CALLS}`);
    await sleep(2_000);
    const idleAfterWarm = rssMiB(coord, "VmRSS");
    if (HEAP_DIR !== undefined) {
      coord.child.kill("SIGUSR2");
      // the node writes it before it answers anything else
      const client = new NodeClient(coord.address);
      await client.status();
      client.close();
    }
    const burstStart = Date.now();
    // VmHWM from here on: the burst's peak, not the warm-up's
    writeFileSync(`/proc/${coord.child.pid}/clear_refs`, "5");

    const loop = monitorEventLoopDelay({ resolution: 10 });
    loop.enable();
    const cpu0 = { client: process.cpuUsage(), coordinator: cpuMs(coord) };
    const t0 = Date.now();
    if (HEAP_DIR !== undefined) setTimeout(() => coord.child.kill("SIGUSR2"), HEAP_AT_MS);
    const calls = Array.from({ length: CALLS }, (_, i) =>
      coordinate(sessions[i % CONNECTIONS]!, frame, DEADLINE_MS),
    );
    // the client's own lag: no request leaves before every one is made
    const issuedMs = Date.now() - t0;
    const results = await Promise.all(calls);
    const wall = (Date.now() - t0) / 1000;
    loop.disable();
    const clientCpu = process.cpuUsage(cpu0.client);
    const coordCpuMs = cpuMs(coord) - cpu0.coordinator;
    const peak = rssMiB(coord, "VmHWM");
    // each reply's kind, its body decoded once: "OK" is served, "OK_NO_ANSWER" the prior
    const kinds = results.map((r) =>
      r.code === GAVE_UP
        ? "GAVE_UP"
        : r.code === OK && !isServed(r)
          ? "OK_NO_ANSWER"
          : (Status[r.code] ?? String(r.code)),
    );
    const codes = new Map<string, number>();
    for (const name of kinds) codes.set(name, (codes.get(name) ?? 0) + 1);
    const inTime = results.filter(
      (r) => r.ms <= DEADLINE_MS + 100 && (r.code === OK || r.code === RESOURCE_EXHAUSTED),
    ).length;
    const ok = codes.get("OK") ?? 0;
    const latest = Math.max(...results.map((r) => r.ms));
    const refusedMs = results
      .filter((r) => r.code === RESOURCE_EXHAUSTED)
      .map((r) => r.ms)
      .sort((a, b) => a - b);
    const lastOkS = Math.max(0, ...results.filter((_, i) => kinds[i] === "OK").map((r) => r.ms)) / 1000;
    const figures: Record<string, Figure> = {
      "sustainable rate": {
        value: sustainable,
        unit: "calls/s",
        note: `${WARM_CALLERS} callers, ${WARM_S} s`,
      },
      "burst calls": { value: CALLS, unit: "calls" },
      "answered ok or RESOURCE_EXHAUSTED by deadline + 100 ms": {
        value: inTime,
        unit: "calls",
        target: CALLS,
        higherIsBetter: true,
      },
      "burst served ok": { value: ok, unit: "calls" },
      "burst served rate": {
        value: lastOkS > 0 ? ok / lastOkS : 0,
        unit: "calls/s",
        target: sustainable,
        higherIsBetter: true,
        note: `${ok} ok by ${lastOkS.toFixed(2)} s`,
      },
      "latest answer": { value: latest, unit: "ms" },
      "late ok (past deadline + 100 ms)": {
        value: results.filter((r) => r.code === OK && r.ms > DEADLINE_MS + 100).length,
        unit: "calls",
      },
      "RESOURCE_EXHAUSTED answer p99": { value: quantile(refusedMs, 0.99), unit: "ms" },
      "latest RESOURCE_EXHAUSTED answer": { value: refusedMs.at(-1) ?? 0, unit: "ms" },
      "coordinator CPU during the burst": { value: coordCpuMs, unit: "ms", note: `of ${wall.toFixed(2)} s` },
      "client CPU during the burst": {
        value: (clientCpu.user + clientCpu.system) / 1000,
        unit: "ms",
        note: "this process: issues the calls, reads the answers",
      },
      "client time to issue the burst": { value: issuedMs, unit: "ms", note: "no request is sent before" },
      "client event-loop delay p99": { value: loop.percentile(99) / 1e6, unit: "ms" },
      "coordinator CPU per served call, sustainable phase": {
        value: served > 0 ? warmCpuMs / served : 0,
        unit: "ms",
        note: `${warmCpuMs} ms for ${served} calls`,
      },
      "coordinator CPU per burst call": { value: coordCpuMs / CALLS, unit: "ms" },
      "coordinator idle RSS": { value: Math.min(idle, idleAfterWarm), unit: "MiB" },
      "coordinator RSS 2 s after the sustainable phase": { value: idleAfterWarm, unit: "MiB" },
      "coordinator peak RSS (VmHWM)": { value: peak, unit: "MiB", target: 2 * Math.min(idle, idleAfterWarm) },
    };
    console.log(`codes: ${[...codes].map(([k, v]) => `${k}=${v}`).join(" ")}`);
    printLateness(results);
    if (MEMORY_FILE !== undefined) printMemory(MEMORY_FILE, idleAt, burstStart);
    if (HEAP_DIR !== undefined) {
      // the burst's snapshot may still be being written
      await sleep(5_000);
      const files = readdirSync(HEAP_DIR)
        .filter((f) => f.endsWith(".heapsnapshot"))
        .sort();
      console.log(
        `heap snapshots (after the sustainable phase, then ${HEAP_AT_MS} ms into the burst): ${files.join(" ")}`,
      );
    }
    recordFigures(
      `overload (${CALLS} Coordinates at once, ${DEADLINE_MS} ms deadlines, ${PEERS} peers)`,
      figures,
    );
  } finally {
    if (MEMORY_DIR !== undefined) rmSync(MEMORY_DIR, { recursive: true, force: true });
    for (const session of sessions) session.destroy();
    const coord = procs.at(-1);
    if (PROFILE_DIR !== undefined && coord !== undefined && coord.child.exitCode === null) {
      // the profile is written on exit: a signal that lets the node shut down, not SIGKILL
      const exited = new Promise((r) => coord.child.once("exit", r));
      coord.child.kill("SIGTERM");
      await exited;
    }
    for (const p of procs) p.child.kill("SIGKILL");
  }
}
