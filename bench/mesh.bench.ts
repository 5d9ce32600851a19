/**
 * Mesh fan-out bench: one coordinator process (this one) fanning out to 8 peer processes on loopback
 * (bench/mesh-peer.ts), side by side in one run:
 *   raw        grpc-js `Promise.all` of the same 8 unary Branch calls (the floor);
 *   transport  GrpcTransport: the same 8 branches through `PeerTransport.branch`;
 *   engine     Coordinator.fanOut over GrpcTransport (synchronous, all 8 required) — informational.
 * Modes run in interleaved rounds so that load from other processes hits them alike. Throughput is
 * measured with `CONCURRENCY` fan-outs in flight; latency (p50/p99) with one at a time.
 * Targets (issue 3): transport/raw throughput >= 0.90, added p50 <= 100 µs.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { fileURLToPath, pathToFileURL } from "node:url";
import * as grpc from "@grpc/grpc-js";
import { Coordinator } from "../src/engine/coordinator.js";
import { LatencyBook } from "../src/estimate/latency-book.js";
import { predicateModel } from "../src/decision/predicate-model.js";
import { GrpcTransport } from "../src/mesh/grpc-transport.js";
import { ChannelPool } from "../src/mesh/channel-pool.js";
import { swarmService } from "../src/mesh/proto.js";
import type { WireBranchReply } from "../src/mesh/proto.js";
import { recordFigures } from "./report.js";

const PEERS = 8;
const CONCURRENCY = 8;
const ROUNDS = Number(process.env.MESH_BENCH_ROUNDS ?? 4);
const ROUND_MS = Number(process.env.MESH_BENCH_ROUND_MS ?? 1_500);
const LATENCY_SAMPLES = Number(process.env.MESH_BENCH_LATENCY_SAMPLES ?? 300);
const PAYLOAD = { q: "bench", n: 1 };

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

function rawFanOut(addresses: string[], clients: grpc.Client[]): FanOut {
  for (const a of addresses) clients.push(new grpc.Client(a, grpc.credentials.createInsecure()));
  const m = swarmService().Branch;
  const payload = Buffer.from(JSON.stringify(PAYLOAD));
  let n = 0;
  return async () => {
    const id = `raw-${++n}`;
    const deadline = Date.now() + 5_000;
    await Promise.all(
      clients.map(
        (c, i) =>
          new Promise<WireBranchReply>((resolve, reject) =>
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
                deadlineUnixMs: deadline,
              },
              new grpc.Metadata(),
              { deadline },
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
    const results = await Promise.all(
      addresses.map((a, i) =>
        t.branch(
          a,
          {
            fanoutId: id,
            branchId: `${id}-${i}`,
            task: { kind: "echo", payload: PAYLOAD },
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

async function latencies(f: FanOut, samples: number, out: number[]): Promise<void> {
  for (let i = 0; i < samples; i++) {
    const t0 = performance.now();
    await f();
    out.push((performance.now() - t0) * 1000);
  }
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

/**
 * The transport's own CPU per branch, isolated from the network and from other processes' load: the
 * same 8-branch fan-out through GrpcTransport and as raw `makeUnaryRequest` calls, both against a
 * fake channel that serializes the request and answers on a microtask with a canned reply.
 * Best of several batches (preemption only ever adds time).
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
      queueMicrotask(() => cb(null, deserialize(reply)));
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
  const best = async (f: () => Promise<unknown>): Promise<number> => {
    let bestUs = Infinity;
    for (let b = 0; b < 7; b++) {
      const n = 2_000;
      const t0 = performance.now();
      for (let i = 0; i < n; i++) await f();
      bestUs = Math.min(bestUs, ((performance.now() - t0) * 1000) / n);
    }
    return bestUs;
  };
  await best(raw);
  await best(viaTransport);
  return { rawUs: await best(raw), transportUs: await best(viaTransport) };
}

export async function run(): Promise<void> {
  const wrapper = await wrapperOverhead();
  const { children, addresses } = await startPeers();
  const pool = new ChannelPool();
  const transport = new GrpcTransport({ pool });
  const rawClients: grpc.Client[] = [];
  const modes: Record<string, FanOut> = {
    raw: rawFanOut(addresses, rawClients),
    transport: transportFanOut(transport, addresses),
    engine: engineFanOut(transport, addresses),
  };
  const names = Object.keys(modes);
  const count: Record<string, number> = {};
  const time: Record<string, number> = {};
  const cpu: Record<string, number> = {};
  const lat: Record<string, number[]> = {};
  try {
    for (const name of names) {
      await throughput(modes[name]!, CONCURRENCY, 300); // warm up connections and JIT
      count[name] = 0;
      time[name] = 0;
      cpu[name] = 0;
      lat[name] = [];
    }
    for (let r = 0; r < ROUNDS; r++) {
      const order = r % 2 === 0 ? names : [...names].reverse();
      for (const name of order) {
        const t0 = now();
        const c0 = process.cpuUsage();
        count[name]! += await throughput(modes[name]!, CONCURRENCY, ROUND_MS);
        const c1 = process.cpuUsage(c0);
        time[name]! += now() - t0;
        cpu[name]! += c1.user + c1.system;
      }
      // Latency one fan-out at a time, the modes taking turns sample by sample so that paired
      // samples meet the same load from other processes.
      for (let i = 0; i < Math.ceil(LATENCY_SAMPLES / ROUNDS); i++) {
        for (const name of order) await latencies(modes[name]!, 1, lat[name]!);
      }
    }
  } finally {
    transport.close();
    pool.closeAll();
    for (const c of rawClients) c.close();
    await stopPeers(children);
  }
  const rate = (n: string): number => (count[n]! / time[n]!) * 1000;
  const cpuPer = (n: string): number => cpu[n]! / count[n]!;
  /** Median of paired differences (mode − raw), sample by sample. */
  const added = (n: string): number =>
    quantile(
      lat[n]!.map((v, i) => v - lat.raw![i]!).sort((a, b) => a - b),
      0.5,
    );
  const p = (n: string, q: number): number =>
    quantile(
      [...lat[n]!].sort((a, b) => a - b),
      q,
    );
  const note = `${PEERS} peer processes, ${CONCURRENCY} fan-outs in flight, ${ROUNDS}×${ROUND_MS} ms interleaved rounds`;
  recordFigures("mesh", {
    "raw grpc-js fan-outs/s": { value: rate("raw"), unit: "1/s", note },
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
      note: "8 branches, CPU only (no network), best of 7 batches",
    },
    "fake-channel fan-out, GrpcTransport": { value: wrapper.transportUs, unit: "us" },
    "transport added CPU per fan-out (fake channel)": {
      value: wrapper.transportUs - wrapper.rawUs,
      unit: "us",
      target: 100,
      note: "what the transport adds to a fan-out's critical path, free of other processes' load",
    },
    "raw fan-out p50": { value: p("raw", 0.5), unit: "us", note: "one fan-out at a time" },
    "raw fan-out p99": { value: p("raw", 0.99), unit: "us" },
    "transport fan-out p50": { value: p("transport", 0.5), unit: "us" },
    "transport fan-out p99": { value: p("transport", 0.99), unit: "us" },
    "engine fan-out p50": { value: p("engine", 0.5), unit: "us" },
    "engine fan-out p99": { value: p("engine", 0.99), unit: "us" },
    "transport added p50": {
      value: added("transport"),
      unit: "us",
      target: 100,
      note: "median of paired per-sample differences from raw",
    },
    "engine added p50": { value: added("engine"), unit: "us" },
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) await run();
