/**
 * Mesh fan-out bench: one coordinator process (this one) fanning out to 8 peer processes on loopback
 * (bench/mesh-peer.ts), side by side in one run:
 *   raw        grpc-js `Promise.all` of the same 8 unary Branch calls (the floor);
 *   transport  GrpcTransport: the same 8 branches through `PeerTransport.branch`;
 *   control    the raw fan-out again, on channels of its own: an A/A comparison whose "added" figures
 *              are the run's noise floor (a true difference of 0 measured with the same method);
 *   engine     Coordinator.fanOut over GrpcTransport (synchronous, all 8 required) — informational.
 * Modes run in interleaved rounds so that load from other processes hits them alike. Throughput is
 * measured with `CONCURRENCY` fan-outs in flight; latency (p50/p99) with one at a time, the modes in a
 * seeded random order in every block of samples (no mode always runs in the same position or after
 * the same mode) and each sample after an idle gap (`MESH_BENCH_GAP_MS`, so that no sample inherits
 * the previous one's teardown in the peers or the coordinator).
 * Added latency is reported two ways, each with a 95% bootstrap interval: the median of the paired
 * per-sample differences (the target's figure) and the difference of the p50s.
 * Targets (issue 3): transport/raw throughput >= 0.90, added p50 <= 100 µs.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { Coordinator } from "../src/engine/coordinator.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { GrpcTransport } from "../src/mesh/grpc-transport.js";
import { ChannelPool, DEFAULT_CHANNEL_OPTIONS } from "../src/mesh/channel-pool.js";
import { swarmService } from "../src/mesh/proto.js";
import type { BranchReply__Output } from "../src/mesh/gen/tailswarm/v1/BranchReply.js";
import { createRng } from "../src/util/rng.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";
import {
  differenceOfMedians,
  formatEstimate,
  median,
  medianOfDifferences,
  pairedBootstrap,
  quantile,
  shuffled,
} from "./mesh-stats.js";
import type { Estimate } from "./mesh-stats.js";

const PEERS = 8;
const CONCURRENCY = 8;
const ROUNDS = Number(process.env.MESH_BENCH_ROUNDS ?? 8);
const ROUND_MS = Number(process.env.MESH_BENCH_ROUND_MS ?? 1_500);
const LATENCY_SAMPLES = Number(process.env.MESH_BENCH_LATENCY_SAMPLES ?? 1_200);
/** Idle time before each latency sample, ms (0: back to back). */
const GAP_MS = Number(process.env.MESH_BENCH_GAP_MS ?? 1);
const SEED = Number(process.env.MESH_BENCH_SEED ?? 1);
const PAYLOAD = { q: "bench", n: 1 };
/** The transport's default deadline grace (GrpcTransport `deadlineGraceMs`), sent by raw calls too. */
const GRACE_MS = 200;

type FanOut = () => Promise<void>;
const now = (): number => performance.timeOrigin + performance.now();

/** Starts the peer processes; if any fails to start, stops the ones that did and rethrows. */
async function startPeers(): Promise<{ children: ChildProcess[]; addresses: string[] }> {
  const script = fileURLToPath(new URL("./mesh-peer.ts", import.meta.url));
  const children: ChildProcess[] = [];
  const started = await Promise.allSettled(
    Array.from({ length: PEERS }, (_, i) => {
      const child = spawn(process.execPath, ["--import", "tsx", script, `peer-${i}`], {
        stdio: ["pipe", "pipe", "inherit"],
      });
      children.push(child);
      return new Promise<number>((resolve, reject) => {
        let out = "";
        child.stdout.on("data", (d: Buffer) => {
          out += d.toString();
          const m = /PORT (\d+)/.exec(out);
          if (m) resolve(Number(m[1]));
        });
        child.on("error", reject);
        child.on("exit", (code) => reject(new Error(`peer ${i} exited with ${code}`)));
      });
    }),
  );
  const failed = started.find((r) => r.status === "rejected");
  if (failed !== undefined) {
    await stopPeers(children);
    throw failed.reason;
  }
  const ports = started.map((r) => (r as PromiseFulfilledResult<number>).value);
  return { children, addresses: ports.map((p) => `127.0.0.1:${p}`) };
}

/** Closes the peers' stdin (they exit on it) and waits; SIGKILL after 5 s for any that hang. */
async function stopPeers(children: readonly ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((resolve) => {
          if (c.exitCode !== null || c.signalCode !== null) return resolve();
          const kill = setTimeout(() => c.kill("SIGKILL"), 5_000);
          c.once("exit", () => {
            clearTimeout(kill);
            resolve();
          });
          c.stdin?.end();
        }),
    ),
  );
}

/**
 * The floor: 8 unary Branch calls straight on grpc-js clients, started in one synchronous loop, each
 * fan-out encoding its task's payload once as any caller must (the transport does the same).
 * The clients use the transport's channel options (DEFAULT_CHANNEL_OPTIONS), so grpc-js gives them
 * the same subchannels, hence the same connections, as the transport's pool: the two modes differ
 * only in the code above the channel. `ownChannels` gives a fan-out connections of its own
 * (`grpc.use_local_subchannel_pool`): the A/A control.
 */
function rawFanOut(addresses: string[], all: grpc.Client[], ownChannels = false): FanOut {
  const options: grpc.ChannelOptions = ownChannels
    ? { ...DEFAULT_CHANNEL_OPTIONS, "grpc.use_local_subchannel_pool": 1 }
    : { ...DEFAULT_CHANNEL_OPTIONS };
  const clients = addresses.map((a) => new grpc.Client(a, grpc.credentials.createInsecure(), options));
  all.push(...clients);
  const m = swarmService().Branch;
  let n = 0;
  return async () => {
    const id = `raw${ownChannels ? "c" : ""}-${++n}`;
    const deadline = Date.now() + 5_000;
    const payload = Buffer.from(JSON.stringify(PAYLOAD));
    await Promise.all(
      clients.map(
        (c, i) =>
          new Promise<BranchReply__Output>((resolve, reject) =>
            c.makeUnaryRequest(
              m.path,
              m.requestSerialize,
              m.responseDeserialize,
              {
                fanoutId: id,
                branchId: `${id}-${i}`,
                kind: "echo",
                payload,
                origin: "bench",
                hop: 0,
                deadlineUnixMs: deadline,
                deadlineGraceMs: GRACE_MS,
              },
              new grpc.Metadata(),
              { deadline: deadline + GRACE_MS },
              (e, v) => (e || !v ? reject(e ?? new Error("empty")) : resolve(v)),
            ),
          ),
      ),
    );
  };
}

function transportFanOut(t: GrpcTransport, addresses: string[]): FanOut {
  let n = 0;
  return async () => {
    const id = `tr-${++n}`;
    const deadline = now() + 5_000;
    const signal = new AbortController().signal;
    // One task object for the fan-out's branches, as Coordinator.fanOut passes it.
    const task = { kind: "echo", payload: PAYLOAD };
    const results = await Promise.all(
      addresses.map((a, i) =>
        t.branch(
          a,
          {
            fanoutId: id,
            branchId: `${id}-${i}`,
            task,
            origin: "bench",
            hop: 0,
            deadline,
          },
          { signal },
        ),
      ),
    );
    for (const r of results) if (r.kind !== "answer") throw new Error(`branch ${r.kind}`);
  };
}

function engineFanOut(t: GrpcTransport, addresses: string[]): FanOut {
  const coordinator = new Coordinator({ transport: t, book: new LatencyBook(), nodeId: "bench" });
  const model = predicateModel<unknown, string>({
    prior: "none",
    decide: () => "answered",
    canFlip: () => true,
  });
  return async () => {
    const o = await coordinator.fanOut(
      { kind: "echo", payload: PAYLOAD },
      { peers: addresses, budgetMs: 5_000, model, policy: "always-sync" },
    );
    if (o.answered !== addresses.length) throw new Error(`answered ${o.answered}/${addresses.length}`);
  };
}

/** Closed loop with `concurrency` fan-outs in flight for `ms`; returns fan-outs completed. */
async function throughput(f: FanOut, concurrency: number, ms: number): Promise<number> {
  const end = now() + ms;
  let done = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (now() < end) {
        await f();
        done++;
      }
    }),
  );
  return done;
}

interface LatencySamples {
  /** Whole fan-out, µs. */
  readonly total: number[];
  /**
   * The synchronous part of the fan-out function, µs: every mode but engine starts its 8 calls in
   * one synchronous loop, so this is the time until the last call is started, and the calls reach
   * the wire only after it (HTTP/2 frames are flushed when the event loop turns).
   */
  readonly issue: number[];
}

const idle = (ms: number): Promise<void> =>
  new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));

async function sample(f: FanOut, out: LatencySamples): Promise<void> {
  await idle(GAP_MS);
  const t0 = performance.now();
  const p = f();
  const t1 = performance.now();
  await p;
  const t2 = performance.now();
  out.total.push((t2 - t0) * 1000);
  out.issue.push((t1 - t0) * 1000);
}

/**
 * The transport's own CPU per branch, isolated from the network and from other processes' load: the
 * same 8-branch fan-out through GrpcTransport and as raw `makeUnaryRequest` calls, both against a
 * fake channel that serializes the request and answers with a canned reply in the next turn of the
 * event loop, as a network reply arrives (a microtask reply kept whole batches in one turn, so work
 * the transport defers to the turn's end piled up instead of running once per fan-out).
 * Best of several interleaved batches (preemption only ever adds time).
 */
async function wrapperOverhead(): Promise<{ rawUs: number; transportUs: number }> {
  const m = swarmService().Branch;
  const reply = (m.responseSerialize as (v: unknown) => Buffer)({
    status: "BRANCH_STATUS_ANSWERED",
    answer: Buffer.from(JSON.stringify(PAYLOAD)),
    serviceMs: 0.1,
    queueMs: 0.01,
    load: { queueDepth: 0, inFlight: 1, capacity: 64 },
    nodeId: "fake",
  });
  const fakeClient = {
    makeUnaryRequest(
      _path: string,
      serialize: (v: unknown) => Buffer,
      deserialize: (b: Buffer) => unknown,
      arg: unknown,
      _md: grpc.Metadata,
      _opts: grpc.CallOptions,
      cb: (e: null, v: unknown) => void,
    ) {
      serialize(arg);
      setImmediate(() => cb(null, deserialize(reply)));
      return { cancel() {} };
    },
  };
  const fakePool = {
    get: () => fakeClient,
    onClose: () => () => {},
    closeAll() {},
  } as unknown as ChannelPool;
  const t = new GrpcTransport({ pool: fakePool });
  const peers = Array.from({ length: PEERS }, (_, i) => `fake-${i}`);
  const payload = Buffer.from(JSON.stringify(PAYLOAD));
  const raw = (): Promise<unknown[]> =>
    Promise.all(
      peers.map(
        (_, i) =>
          new Promise((resolve) =>
            fakeClient.makeUnaryRequest(
              m.path,
              m.requestSerialize as (v: unknown) => Buffer,
              m.responseDeserialize,
              { fanoutId: "f", branchId: `b${i}`, kind: "echo", payload, origin: "bench", deadlineUnixMs: 1 },
              new grpc.Metadata(),
              { deadline: Date.now() + 5_000 },
              (_e, v) => resolve(v),
            ),
          ),
      ),
    );
  const task = { kind: "echo", payload: PAYLOAD };
  const viaTransport = (): Promise<unknown[]> => {
    const deadline = now() + 5_000;
    const signal = new AbortController().signal;
    return Promise.all(
      peers.map((p, i) =>
        t.branch(
          p,
          { fanoutId: "f", branchId: `b${i}`, task, origin: "bench", hop: 0, deadline },
          { signal },
        ),
      ),
    );
  };
  const batch = async (f: () => Promise<unknown>): Promise<number> => {
    const n = 2_000;
    const t0 = performance.now();
    for (let i = 0; i < n; i++) await f();
    return ((performance.now() - t0) * 1000) / n;
  };
  // Batches alternate (so a burst of load from other processes hits both alike); best of each.
  let rawUs = Infinity;
  let transportUs = Infinity;
  for (let b = 0; b < 16; b++) {
    const first = b % 2 === 0;
    const r1 = first ? await batch(raw) : NaN;
    const tUs = await batch(viaTransport);
    const r2 = first ? NaN : await batch(raw);
    if (b < 2) continue; // warm-up
    rawUs = Math.min(rawUs, first ? r1 : r2);
    transportUs = Math.min(transportUs, tUs);
  }
  return { rawUs, transportUs };
}

export async function run(): Promise<void> {
  const loadBefore = loadavg();
  const wrapper = await wrapperOverhead();
  const { children, addresses } = await startPeers();
  const pool = new ChannelPool();
  const transport = new GrpcTransport({ pool });
  const rawClients: grpc.Client[] = [];
  const modes: Record<string, FanOut> = {
    raw: rawFanOut(addresses, rawClients),
    control: rawFanOut(addresses, rawClients, true),
    transport: transportFanOut(transport, addresses),
    engine: engineFanOut(transport, addresses),
  };
  const names = Object.keys(modes);
  const count: Record<string, number> = {};
  const time: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  const lat: Record<string, LatencySamples> = {};
  const random = createRng(SEED);
  try {
    for (const name of names) {
      await throughput(modes[name]!, CONCURRENCY, 300); // warm up connections and JIT
      count[name] = 0;
      time[name] = 0;
      cpu[name] = 0;
      lat[name] = { total: [], issue: [] };
    }
    for (let r = 0; r < ROUNDS; r++) {
      for (const name of shuffled(names, random)) {
        const t0 = now();
        const c0 = process.cpuUsage();
        count[name]! += await throughput(modes[name]!, CONCURRENCY, ROUND_MS);
        const c1 = process.cpuUsage(c0);
        time[name]! += now() - t0;
        cpu[name]! += c1.user + c1.system;
      }
      // Latency one fan-out at a time, the modes taking turns sample by sample (in a fresh random
      // order each turn) so that the samples of a turn meet the same load from other processes.
      for (let i = 0; i < Math.ceil(LATENCY_SAMPLES / ROUNDS); i++) {
        for (const name of shuffled(names, random)) await sample(modes[name]!, lat[name]!);
      }
    }
  } finally {
    transport.close();
    pool.closeAll();
    for (const c of rawClients) c.close();
    await stopPeers(children);
  }
  const loadAfter = loadavg();
  const rate = (n: string): number => (count[n]! / time[n]!) * 1000;
  const cpuPer = (n: string): number => cpu[n]! / count[n]!;
  const p = (n: string, q: number): number =>
    quantile(
      [...lat[n]!.total].sort((a, b) => a - b),
      q,
    );
  const paired = (n: string): Estimate => pairedBootstrap(lat[n]!.total, lat.raw!.total, medianOfDifferences);
  const ofP50s = (n: string): Estimate => pairedBootstrap(lat[n]!.total, lat.raw!.total, differenceOfMedians);
  const load = (l: number[]): string => l.map((v) => v.toFixed(2)).join(" ");
  const note = `${PEERS} peer processes, ${CONCURRENCY} fan-outs in flight, ${ROUNDS}×${ROUND_MS} ms interleaved rounds; load average ${load(loadBefore)} before, ${load(loadAfter)} after`;
  const added = (n: string): Record<string, Figure> => {
    const a = paired(n);
    const d = ofP50s(n);
    const what = n === "control" ? "control (raw again, own channels)" : n;
    return {
      [`${what} added p50`]: {
        value: a.value,
        unit: "us",
        ...(n === "transport" ? { target: 100 } : {}),
        note: `median of paired per-sample differences from raw, 95% CI ${formatEstimate(a)}`,
      },
      [`${what} added p50, 95% CI low`]: { value: a.low, unit: "us" },
      [`${what} added p50, 95% CI high`]: { value: a.high, unit: "us" },
      [`${what} p50 − raw p50`]: {
        value: d.value,
        unit: "us",
        note: `difference of the p50s, 95% CI ${formatEstimate(d)}`,
      },
    };
  };
  recordFigures("mesh", {
    "raw grpc-js fan-outs/s": { value: rate("raw"), unit: "1/s", note },
    "control fan-outs/s": { value: rate("control"), unit: "1/s", note: "raw again, own channels" },
    "transport fan-outs/s": { value: rate("transport"), unit: "1/s" },
    "engine fan-outs/s": {
      value: rate("engine"),
      unit: "1/s",
      note: "Coordinator.fanOut, synchronous, all 8",
    },
    "transport/raw throughput ratio": {
      value: rate("transport") / rate("raw"),
      unit: "1",
      target: 0.9,
      higherIsBetter: true,
    },
    "control/raw throughput ratio": {
      value: rate("control") / rate("raw"),
      unit: "1",
      note: "A/A: how far from 1 the run's noise alone moves a ratio",
    },
    "engine/raw throughput ratio": { value: rate("engine") / rate("raw"), unit: "1" },
    "raw coordinator CPU per fan-out": {
      value: cpuPer("raw"),
      unit: "us",
      note: "user+system CPU of the coordinator process: robust to other processes' load",
    },
    "transport coordinator CPU per fan-out": { value: cpuPer("transport"), unit: "us" },
    "engine coordinator CPU per fan-out": { value: cpuPer("engine"), unit: "us" },
    "transport/raw CPU-bound throughput ratio": {
      value: cpuPer("raw") / cpuPer("transport"),
      unit: "1",
      target: 0.9,
      higherIsBetter: true,
      note: "raw CPU / transport CPU: the throughput ratio when the coordinator's core is the bottleneck",
    },
    "transport added CPU per fan-out": {
      value: cpuPer("transport") - cpuPer("raw"),
      unit: "us",
      target: 100,
    },
    "fake-channel fan-out, raw calls": {
      value: wrapper.rawUs,
      unit: "us",
      note: "8 branches, CPU only (no network), best of 14 interleaved batches",
    },
    "fake-channel fan-out, GrpcTransport": { value: wrapper.transportUs, unit: "us" },
    "transport added CPU per fan-out (fake channel)": {
      value: wrapper.transportUs - wrapper.rawUs,
      unit: "us",
      target: 100,
      note: "what the transport adds to a fan-out's critical path, free of other processes' load",
    },
    "raw fan-out p50": {
      value: p("raw", 0.5),
      unit: "us",
      note: `one fan-out at a time, ${lat.raw!.total.length} samples per mode, ${GAP_MS} ms idle before each`,
    },
    "raw fan-out p99": { value: p("raw", 0.99), unit: "us" },
    "control fan-out p50": { value: p("control", 0.5), unit: "us" },
    "transport fan-out p50": { value: p("transport", 0.5), unit: "us" },
    "transport fan-out p99": { value: p("transport", 0.99), unit: "us" },
    "engine fan-out p50": { value: p("engine", 0.5), unit: "us" },
    "engine fan-out p99": { value: p("engine", 0.99), unit: "us" },
    "raw: 8 calls started, p50": {
      value: median(lat.raw!.issue),
      unit: "us",
      note: "synchronous part of the fan-out: until the last of the 8 calls is started",
    },
    "transport: 8 calls started, p50": { value: median(lat.transport!.issue), unit: "us" },
    ...added("transport"),
    ...added("control"),
    "engine added p50": {
      value: paired("engine").value,
      unit: "us",
      note: "median of paired per-sample differences from raw",
    },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
