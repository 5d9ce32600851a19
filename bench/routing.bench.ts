/**
 * Routing one task over 40 and 400 candidates: p50/p99 per call, µs (target: MABP p99 <= 20 µs at 40).
 * Each call scores every candidate (MABP: queue differential, successor pressure, penalty, work at the
 * candidate's compatibility signature) and books a reservation; state settles every 100 calls.
 *
 *   npx tsx bench/routing.bench.ts     (or: npm run bench -- routing)
 */
import { pathToFileURL } from "node:url";
import { commodity } from "../src/routing/commodity.js";
import { PrimitiveTable, type PrimitiveSpec } from "../src/routing/primitives.js";
import { createRouter } from "../src/routing/router.js";
import { SignatureSet, signatureOf } from "../src/routing/signature.js";
import type { PeerView, RouteTask, RoutingPolicyName } from "../src/routing/types.js";
import { createRng } from "../src/util/rng.js";
import { recordFigures } from "./report.js";
import type { Figure } from "./report.js";

const KEYS = ["rag/0", "rag/1", "rag/2", "moe/0", "moe/1", "agent/0", "agent/1", "agent/2"];

function primitives(): PrimitiveTable {
  const specs: Record<string, PrimitiveSpec> = {};
  for (const key of KEYS) {
    const [cls, stage] = key.split("/") as [string, string];
    const next = `${cls}/${Number(stage) + 1}`;
    specs[key] = {
      noReuse: { work: 4, penalty: 4, successors: KEYS.includes(next) ? [{ key: next, p: 0.6 }] : [] },
      reuse: { work: 1, penalty: 1, successors: KEYS.includes(next) ? [{ key: next, p: 0.1 }] : [] },
    };
  }
  return new PrimitiveTable(specs);
}

function views(n: number, rng: () => number): PeerView[] {
  return Array.from({ length: n }, (_, i) => {
    const queues: Record<string, number> = {};
    let backlog = 0;
    for (const k of KEYS) backlog += queues[k] = Math.floor(rng() * 20);
    const sigs = Array.from({ length: 64 }, () => signatureOf(`rag:${Math.floor(rng() * 500)}`));
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
}

function measure(
  policy: RoutingPolicyName,
  n: number,
): { p50: number; p99: number; mean: number; cpu: number } {
  const rng = createRng(42);
  const vs = views(n, rng);
  const router = createRouter(policy, { primitives: primitives(), nu: 5, reservationTtl: 1e9 });
  const tasks: RouteTask[] = Array.from({ length: 256 }, (_, i) => ({
    commodity: commodity("rag", 0, String(i)),
    signature: signatureOf(`rag:${Math.floor(rng() * 500)}`),
    pressure: 10,
  }));
  const iterations = n > 100 ? 20_000 : 100_000;
  const warm = 5_000;
  const samples = new Float64Array(iterations);
  let now = 1;
  let cpu0 = process.cpuUsage();
  for (let i = 0; i < warm + iterations; i++) {
    if (i === warm) cpu0 = process.cpuUsage();
    const task = tasks[i & 255]!;
    const t0 = process.hrtime.bigint();
    router.route(task, vs, 1, { now });
    const dt = Number(process.hrtime.bigint() - t0) / 1000;
    if (i >= warm) samples[i - warm] = dt;
    if (i % 100 === 99) {
      now += 1;
      for (const v of vs) router.settle(v.id, now);
    }
  }
  const used = process.cpuUsage(cpu0);
  const cpu = (used.user + used.system) / iterations;
  samples.sort();
  let sum = 0;
  for (const s of samples) sum += s;
  const q = (p: number): number => samples[Math.min(samples.length - 1, Math.ceil(p * samples.length) - 1)]!;
  return { p50: q(0.5), p99: q(0.99), mean: sum / samples.length, cpu };
}

export function run(resultsFile?: string): void {
  const figures: Record<string, Figure> = {};
  for (const policy of ["mabp", "jsq", "bp"] as const) {
    for (const n of [40, 400]) {
      const r = measure(policy, n);
      const target = policy === "mabp" && n === 40 ? { target: 20 } : {};
      figures[`route ${policy} over ${n} candidates p50`] = { value: r.p50, unit: "µs" };
      figures[`route ${policy} over ${n} candidates p99`] = { value: r.p99, unit: "µs", ...target };
      figures[`route ${policy} over ${n} candidates cpu mean`] = {
        value: r.cpu,
        unit: "µs",
        note: "process CPU time per call (wall-clock tails include preemption on a shared machine)",
      };
      console.log(
        `route ${policy.padEnd(5)} over ${String(n).padStart(3)} candidates: p50 ${r.p50.toFixed(2)} µs  p99 ${r.p99.toFixed(2)} µs  mean ${r.mean.toFixed(2)} µs  cpu ${r.cpu.toFixed(2)} µs/call`,
      );
    }
  }
  recordFigures("routing", figures, resultsFile);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) run();
