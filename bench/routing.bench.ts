/**
 * Routing one task over 40 and 400 candidates: wall-clock p50/p99/p99.9 per call and process CPU per
 * call, µs (target: MABP p99 <= 20 µs at 40). Each call scores every candidate (MABP: queue
 * differential, successor pressure, penalty, work at the candidate's compatibility signature) and books
 * a reservation; state settles every 100 calls (outside the timed region).
 *
 * How it measures, so that the tail is the router's and not the bench's:
 * - every (policy, candidates) case runs in its own process, so no case inherits another's JIT state
 *   (a call site made polymorphic by an earlier policy) or heap;
 * - warm-up calls first (JIT, inline caches, reservation arrays at their working size), then one timed
 *   sample per call with `performance.now()` (a double: no BigInt allocated per sample, unlike
 *   `process.hrtime.bigint()`); the timer's own cost is measured the same way on an empty region and
 *   reported (`timer`), not subtracted;
 * - 200 000 samples at 40 candidates (p99 from 2 000 tail samples, p99.9 from 200), 40 000 at 400;
 * - heap bytes allocated per call, from the heap's growth over calls between two collections;
 * - the 1-minute load average at the start and end of each case: on a shared 2-core machine wall-clock
 *   tails include preemption by other processes, so the CPU mean is the more robust figure under load.
 *
 * `mabp-learned` is the daemon's configuration: Learn-MABP primitives (profiles per peer, key and
 * compatibility signature) and views built from adverts by `viewFromAdvert`, as the PeerViewBook does.
 *
 *   npx tsx bench/routing.bench.ts     (or: npm run bench -- routing)
 *   npx tsx bench/routing.bench.ts --case mabp 40    (one case, JSON on stdout)
 */
import { spawn } from "node:child_process";
import { loadavg } from "node:os";
import { fileURLToPath, pathToFileURL } from "node:url";
import { viewFromAdvert } from "../src/routing/advert.js";
import { commodity } from "../src/routing/commodity.js";
import { LearnedPrimitives } from "../src/routing/learned-primitives.js";
import { PrimitiveTable, type PrimitiveSpec, type Primitives } from "../src/routing/primitives.js";
import { createRouter } from "../src/routing/router.js";
import { NO_MEMORY, SignatureSet, signatureOf } from "../src/routing/signature.js";
import type { PeerView, RouteTask, Router, RoutingPolicyName } from "../src/routing/types.js";
import { createRng } from "../src/util/rng.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const KEYS = ["rag/0", "rag/1", "rag/2", "moe/0", "moe/1", "agent/0", "agent/1", "agent/2"];
const CASES: readonly (readonly [BenchPolicy, number])[] = [
  ["mabp", 40],
  ["mabp", 400],
  ["mabp-learned", 40],
  ["mabp-learned", 400],
  ["jsq", 40],
  ["jsq", 400],
  ["bp", 40],
  ["bp", 400],
];

type BenchPolicy = RoutingPolicyName | "mabp-learned";

interface CaseResult {
  readonly policy: BenchPolicy;
  readonly n: number;
  readonly samples: number;
  readonly p50: number;
  readonly p99: number;
  readonly p999: number;
  readonly mean: number;
  readonly cpu: number;
  readonly timerP50: number;
  readonly heapBytesPerCall: number;
  readonly load: readonly [number, number];
}

function specs(): Record<string, PrimitiveSpec> {
  const out: Record<string, PrimitiveSpec> = {};
  for (const key of KEYS) {
    const [cls, stage] = key.split("/") as [string, string];
    const next = `${cls}/${Number(stage) + 1}`;
    out[key] = {
      noReuse: { work: 4, penalty: 4, successors: KEYS.includes(next) ? [{ key: next, p: 0.6 }] : [] },
      reuse: { work: 1, penalty: 1, successors: KEYS.includes(next) ? [{ key: next, p: 0.1 }] : [] },
    };
  }
  return out;
}

/** Learn-MABP after a run of observations: every peer's no-reuse profile, and a reuse profile per resident signature. */
function learned(vs: readonly PeerView[], resident: readonly (readonly number[])[]): LearnedPrimitives {
  const s = specs();
  const l = new LearnedPrimitives(new PrimitiveTable(s));
  const next = (e: { successors: readonly { key: string }[] }): string[] => e.successors.map((x) => x.key);
  vs.forEach((v, i) => {
    for (const key of KEYS) {
      const spec = s[key]!;
      l.observe(v.id, key, NO_MEMORY, { ...spec.noReuse, successors: next(spec.noReuse) });
      for (const sig of resident[i]!) {
        if (key === "rag/0") l.observe(v.id, key, sig, { ...spec.reuse!, successors: next(spec.reuse!) });
      }
    }
  });
  return l;
}

export function setup(
  policy: BenchPolicy,
  n: number,
): { router: Router; vs: PeerView[]; tasks: RouteTask[] } {
  const rng = createRng(42);
  const resident: number[][] = [];
  const vs: PeerView[] = Array.from({ length: n }, (_, i) => {
    const queues: Record<string, number> = {};
    // Adverts list their queues in varying order, as a peer's Map does (objects of many shapes).
    const start = policy === "mabp-learned" ? i % KEYS.length : 0;
    for (let j = 0; j < KEYS.length; j++) queues[KEYS[(start + j) % KEYS.length]!] = Math.floor(rng() * 20);
    const sigs = Array.from({ length: 64 }, () => signatureOf(`rag:${Math.floor(rng() * 500)}`));
    resident.push(sigs);
    if (policy === "mabp-learned") {
      return viewFromAdvert(`peer-${i}`, {
        queues,
        signatures: sigs,
        memoryUsed: 50,
        memoryBudget: 100,
        capacity: 8,
        stateAt: 0,
      });
    }
    let backlog = 0;
    for (const k of KEYS) backlog += queues[k]!;
    return {
      id: `peer-${i}`,
      queues,
      backlog,
      signatures: SignatureSet.bounded(sigs),
      memoryUsed: 50,
      memoryBudget: 100,
      capacity: 8,
      stateAt: 0,
    };
  });
  const primitives: Primitives =
    policy === "mabp-learned" ? learned(vs, resident) : new PrimitiveTable(specs());
  const router = createRouter(policy === "mabp-learned" ? "mabp" : policy, {
    primitives,
    nu: 5,
    reservationTtl: 1e9,
  });
  const tasks: RouteTask[] = Array.from({ length: 256 }, (_, i) => ({
    commodity: commodity("rag", 0, String(i)),
    signature: signatureOf(`rag:${Math.floor(rng() * 500)}`),
    pressure: 10,
  }));
  return { router, vs, tasks };
}

function quantile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)]!;
}

/** p50 of an empty timed region, µs: what `performance.now()` twice costs here. */
function timerCost(): number {
  const s = new Float64Array(100_000);
  for (let i = 0; i < s.length; i++) {
    const t0 = performance.now();
    s[i] = (performance.now() - t0) * 1000;
  }
  return quantile(s.sort(), 0.5);
}

function measureCase(policy: BenchPolicy, n: number): CaseResult {
  const load0 = loadavg()[0]!;
  const { router, vs, tasks } = setup(policy, n);
  const iterations = n > 100 ? 40_000 : 200_000;
  const warm = n > 100 ? 4_000 : 20_000;
  let now = 1;
  let call = 0;
  const step = (): void => {
    router.route(tasks[call & 255]!, vs, 1, { now });
    if (call % 100 === 99) {
      now += 1;
      for (const v of vs) router.settle(v.id, now);
    }
    call++;
  };
  for (let i = 0; i < warm; i++) step();

  const samples = new Float64Array(iterations);
  const cpu0 = process.cpuUsage();
  for (let i = 0; i < iterations; i++) {
    const task = tasks[call & 255]!;
    const t0 = performance.now();
    router.route(task, vs, 1, { now });
    samples[i] = (performance.now() - t0) * 1000;
    if (call % 100 === 99) {
      now += 1;
      for (const v of vs) router.settle(v.id, now);
    }
    call++;
  }
  const used = process.cpuUsage(cpu0);
  let sum = 0;
  for (const s of samples) sum += s;
  samples.sort();
  return {
    policy,
    n,
    samples: iterations,
    p50: quantile(samples, 0.5),
    p99: quantile(samples, 0.99),
    p999: quantile(samples, 0.999),
    mean: sum / iterations,
    cpu: (used.user + used.system) / iterations,
    timerP50: timerCost(),
    heapBytesPerCall: heapPerCall(step),
    load: [load0, loadavg()[0]!],
  };
}

/**
 * Heap bytes allocated per `step()`, from the heap's growth over a run of calls; a run during which a
 * collection ran (the heap shrank) is discarded and retried. The smallest of five clean runs.
 */
function heapPerCall(step: () => void): number {
  const calls = 2_000;
  let best = Infinity;
  for (let attempt = 0, clean = 0; attempt < 50 && clean < 5; attempt++) {
    const h0 = process.memoryUsage().heapUsed;
    for (let i = 0; i < calls; i++) step();
    const h1 = process.memoryUsage().heapUsed;
    if (h1 < h0) continue;
    clean++;
    best = Math.min(best, (h1 - h0) / calls);
  }
  return best;
}

/** Runs one case in a fresh process (same loader as this one) and returns its result. */
function spawnCase(policy: BenchPolicy, n: number): Promise<CaseResult> {
  const child = spawn(
    process.execPath,
    [...process.execArgv, fileURLToPath(import.meta.url), "--case", policy, String(n)],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.setEncoding("utf8");
  child.stdout.on("data", (d: string) => (out += d));
  return new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("exit", (code) => {
      if (code !== 0) reject(new Error(`routing bench case ${policy}/${n} exited with ${code}`));
      else resolve(JSON.parse(out.trim().split("\n").pop()!) as CaseResult);
    });
  });
}

export async function run(resultsFile?: string): Promise<void> {
  const figures: Record<string, Figure> = {};
  for (const [policy, n] of CASES) {
    const r = await spawnCase(policy, n);
    const name = `route ${policy} over ${n} candidates`;
    const target = policy === "mabp" && n === 40 ? { target: 20 } : {};
    const load = `load average ${r.load[0].toFixed(2)} → ${r.load[1].toFixed(2)}`;
    figures[`${name} p50`] = { value: r.p50, unit: "µs" };
    figures[`${name} p99`] = { value: r.p99, unit: "µs", ...target, note: `${r.samples} samples; ${load}` };
    figures[`${name} p99.9`] = { value: r.p999, unit: "µs" };
    figures[`${name} cpu mean`] = {
      value: r.cpu,
      unit: "µs",
      note: "process CPU time per call (wall-clock tails include preemption on a shared machine)",
    };
    figures[`${name} heap`] = { value: r.heapBytesPerCall, unit: "B/call" };
    console.log(
      `${name.padEnd(42)} p50 ${r.p50.toFixed(2)}  p99 ${r.p99.toFixed(2)}  p99.9 ${r.p999.toFixed(2)}  mean ${r.mean.toFixed(2)}  cpu ${r.cpu.toFixed(2)} µs/call  heap ${r.heapBytesPerCall.toFixed(0)} B/call  (timer ${r.timerP50.toFixed(3)} µs; ${load})`,
    );
  }
  recordFigures("routing", figures, resultsFile);
}

const argv = process.argv.slice(2);
if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  if (argv[0] === "--case") {
    const policy = argv[1] as BenchPolicy;
    const n = Number(argv[2]);
    console.log(JSON.stringify(measureCase(policy, n)));
  } else {
    await run();
  }
}
