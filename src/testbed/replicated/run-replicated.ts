/**
 * Runs the replicated-tail scenario: the replicas as one `tailswarm host` process, the coordinator as
 * a node process of its own, both on loopback; every request of the seeded stream sent to the
 * coordinator once per hedge policy (a replicated Coordinate: any k of the replicas, in the request's
 * order), then every process stopped and the report written (replicated-report.json and the table).
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { TailswarmError } from "../../errors.js";
import { freePorts } from "../free-port.js";
import { Launcher } from "../launcher.js";
import { SwarmClient } from "../swarm-client.js";
import type { ReplicatedScenario } from "./scenario.js";
import { formatReplicated } from "./format.js";
import { modelP99s, replicaId, replicaModel } from "./replica-model.js";
import { scoreBudget } from "./score.js";
import type { ReplicatedCall } from "./score.js";
import type { ReplicatedReport } from "./report.js";
import { replicatedStream } from "./stream.js";
import type { ReplicatedRequestPlan } from "./stream.js";

export interface RunReplicatedOptions {
  readonly outDir?: string;
  readonly signal?: AbortSignal;
  readonly log?: (line: string) => void;
}

const KIND = "work";

export async function runReplicated(
  s: ReplicatedScenario,
  o: RunReplicatedOptions = {},
): Promise<{ report: ReplicatedReport; table: string }> {
  const log = o.log ?? (() => undefined);
  const outDir = resolve(o.outDir ?? `testbed/out/${s.name}`);
  await mkdir(join(outDir, "nodes"), { recursive: true });
  const ports = await freePorts(s.replicas + 1);
  const launcher = new Launcher(join(outDir, "nodes"));
  const node = { logLevel: "warn", drainGraceMs: 1000, probe: { intervalMs: 1000 } };
  const ids = Array.from({ length: s.replicas }, (_, i) => replicaId(i));
  const coordinator = new SwarmClient(`127.0.0.1:${ports[s.replicas]!}`);
  const calls: ReplicatedCall[] = [];
  const errors: Record<string, number> = {};
  let left: string[] = [];
  try {
    await launcher.startHost({
      id: "replicas",
      nodes: ids.map((id, i) => ({
        id,
        config: {
          ...node,
          nodeId: id,
          listen: `127.0.0.1:${ports[i]!}`,
          peers: [],
          handlers: [{ kind: KIND, use: "synthetic", options: { ...replicaModel(s, i), replayShift: true } }],
        },
      })),
    });
    await launcher.start({
      id: "coordinator",
      config: {
        ...node,
        nodeId: "coordinator",
        listen: `127.0.0.1:${ports[s.replicas]!}`,
        peers: ports.slice(0, s.replicas).map((p) => `127.0.0.1:${p}`),
        handlers: [{ kind: "echo", use: "echo" }],
        hedge: s.hedge,
      },
    });
    log(`replicated-tail: ${s.replicas} replicas and a coordinator started (logs: ${join(outDir, "nodes")})`);
    await waitLive(coordinator, ids, s.k, launcher, o.signal);
    const stream = replicatedStream(s);
    log(
      `${stream.length} requests × ${s.policies.length} policies over ${s.warmupS + s.durationS} s (${s.warmupS} s warm-up)`,
    );
    await drive(stream, s, ids, coordinator, o.signal, (plan, call) => {
      if (!plan.measured) return;
      calls.push(call);
      if (call.code !== "OK") errors[call.code] = (errors[call.code] ?? 0) + 1;
    });
  } finally {
    coordinator.close();
    const stopped = await launcher.stopAll(3_000);
    left = stopped.leftRunning;
  }
  const p99s = modelP99s(s);
  const below = Math.min(...p99s);
  const report: ReplicatedReport = {
    scenario: s.name,
    seed: s.seed,
    duration_s: s.durationS,
    warmup_s: s.warmupS,
    replicas: s.replicas,
    k: s.k,
    policies: s.policies,
    hedge: s.hedge,
    replica_p99_model_ms: p99s.map((v) => Math.round(v * 10) / 10),
    budgets: s.budgetsMs.map((b) => scoreBudget(calls, b, s.policies, below)),
    errors,
    processes: { launched: launcher.launched.length, left_running: left },
    interrupted: o.signal?.aborted === true,
  };
  const table = formatReplicated(report);
  await writeFile(join(outDir, "replicated-report.json"), JSON.stringify(report, null, 2));
  await writeFile(join(outDir, "replicated-report.txt"), table);
  await writeFile(join(outDir, "calls.jsonl"), calls.map((c) => JSON.stringify(c)).join("\n") + "\n");
  return { report, table };
}

/** Until the coordinator runs a replicated request over every replica (its membership sees them all). */
async function waitLive(
  client: SwarmClient,
  ids: readonly string[],
  k: number,
  launcher: Launcher,
  signal: AbortSignal | undefined,
  timeoutMs = 60_000,
): Promise<void> {
  const until = Date.now() + timeoutMs;
  let last = "";
  for (;;) {
    if (signal?.aborted) throw new TailswarmError("ABORTED", "testbed interrupted while starting");
    const crashed = launcher.crashed();
    if (crashed.length > 0)
      throw new TailswarmError(
        "INTERNAL",
        `node ${crashed[0]!.id} exited during startup; see ${crashed[0]!.logFile}`,
      );
    const r = await client.coordinate({
      ...callOf(ids, k, "none", 0),
      budgetMs: 2_000,
    });
    if (r.ok) return;
    last = `${r.code} ${r.message}`;
    if (Date.now() > until)
      throw new TailswarmError(
        "DEADLINE_EXCEEDED",
        `startup: the coordinator did not see every replica (${last})`,
      );
    await new Promise((res) => setTimeout(res, 300));
  }
}

function callOf(replicas: readonly string[], k: number, policy: string, shiftMs: number) {
  return {
    kind: KIND,
    payload: { modelClockShiftMs: shiftMs },
    policy: "",
    decision: "",
    options: null,
    replicated: { replicas, k, hedgePolicy: policy },
  };
}

/** Sends every request at its time, its policy copies `staggerMs` apart; resolves when all replied. */
async function drive(
  stream: readonly ReplicatedRequestPlan[],
  s: ReplicatedScenario,
  ids: readonly string[],
  client: SwarmClient,
  signal: AbortSignal | undefined,
  onCall: (plan: ReplicatedRequestPlan, call: ReplicatedCall) => void,
): Promise<void> {
  const t0 = performance.now();
  const pending: Promise<void>[] = [];
  for (const plan of stream) {
    if (signal?.aborted) break;
    const wait = plan.atMs - (performance.now() - t0);
    if (wait > 0) await new Promise((res) => setTimeout(res, wait));
    const replicas = plan.order.map((i) => ids[i]!);
    plan.policies.forEach((policy, j) => {
      const shift = j * s.staggerMs;
      pending.push(
        new Promise<void>((res) => setTimeout(res, shift)).then(async () => {
          const r = await client.coordinate({
            ...callOf(replicas, s.k, policy, shift),
            budgetMs: plan.budgetMs,
          });
          const base = {
            coordinator: `budget-${plan.budgetMs}`,
            request: plan.request,
            budgetMs: plan.budgetMs,
            policy,
            primaries: s.k,
          };
          if (!r.ok) {
            onCall(plan, {
              ...base,
              code: r.code,
              latencyMs: plan.budgetMs,
              missed: true,
              backups: 0,
              backupsWon: 0,
              unlandable: 0,
              cutWorkMs: 0,
              refused: {},
              refusedBackupP99Ms: [],
            });
            return;
          }
          const v = r.value;
          const missed = v.deadlineMissed || r.rttMs > plan.budgetMs;
          const refused: Record<string, number> = {};
          for (const x of v.refused) refused[x.reason] = (refused[x.reason] ?? 0) + 1;
          onCall(plan, {
            ...base,
            code: "OK",
            latencyMs: missed ? plan.budgetMs : r.rttMs,
            missed,
            backups: v.backups.length,
            backupsWon: v.backups.filter((b) => b.won).length,
            unlandable: v.backups.filter((b) => !b.landable).length,
            cutWorkMs: v.branches
              .filter((b) => b.outcome === "abandoned" || b.outcome === "late")
              .reduce((sum, b) => sum + b.latencyMs, 0),
            refused,
            refusedBackupP99Ms: v.refused.flatMap((x) => (x.backupP99Ms == null ? [] : [x.backupP99Ms])),
          });
        }),
      );
    });
  }
  await Promise.all(pending);
}
