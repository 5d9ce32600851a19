/**
 * The testbed's load phases, the same for a launched swarm (run-testbed.ts) and an attached one
 * (attach.ts): warm-up (the same kind of load, not recorded, so estimates are fresh when counting
 * starts), then the measured stream with the direct measurement fan-outs beside it, then stop and
 * drain. Reports the measured window and the testbed process's own event-loop delay over it.
 */
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { CoordinatorLoopPoll } from "./coordinator-loop-poll.js";
import type { LoopDelaySummary } from "./coordinator-loop-poll.js";
import type { LoadGenerator } from "./load-generator.js";
import { buildReport } from "./report.js";
import type { ProcessSummary, Report } from "./report.js";
import { scoreContext } from "./score-call.js";
import type { PeerPlan } from "./topology.js";
import type { Progress } from "./progress.js";
import { requestStream } from "./request-stream.js";
import type { Scenario } from "./scenario-types.js";

export interface DriveResult {
  /** The measured window, epoch ms (equal when nothing was measured). */
  readonly measuredStart: number;
  readonly measuredEnd: number;
  /** Event-loop delay of this process while measuring, ms (null when nothing was measured). */
  readonly loopDelayMs: {
    readonly p50: number | null;
    readonly p99: number | null;
    readonly max: number | null;
  };
  /** Each coordinator's own event-loop delay over the measured window (empty when not read). */
  readonly coordinatorLoopDelayMs: Readonly<Record<string, LoopDelaySummary>>;
}

export interface DriveHooks {
  /** True once the run was interrupted (Ctrl-C): skip what has not started. */
  readonly interrupted: () => boolean;
  /** Called as the measured window opens and closes (e.g. to read CPU counters). */
  readonly onMeasureStart?: () => void;
  readonly onMeasureEnd?: () => void;
  /** Coordinators (name → address) whose event-loop delay is read during the measured window. */
  readonly coordinators?: ReadonlyMap<string, string>;
}

export async function driveLoad(
  gen: LoadGenerator,
  s: Scenario,
  progress: Progress,
  hooks: DriveHooks,
): Promise<DriveResult> {
  const loopDelay = monitorEventLoopDelay({ resolution: 10 });
  const poll = hooks.coordinators === undefined ? undefined : new CoordinatorLoopPoll(hooks.coordinators);
  const primed = poll?.prime();
  let coordinatorLoops: Record<string, LoopDelaySummary> | undefined;
  let measuredStart = Date.now();
  let measuredEnd = measuredStart;
  try {
    if (!hooks.interrupted() && s.warmupS > 0) {
      const warm = requestStream(s.seed, s.coordinators, s.warmupS * 1000, "warmup");
      const t = Date.now();
      const timer = setInterval(
        () => progress.update("warm-up", (Date.now() - t) / 1000, s.warmupS, ""),
        250,
      );
      await gen.run(warm, s.policies, false).finally(() => clearInterval(timer));
    }
    await primed;
    if (!hooks.interrupted()) {
      const stream = requestStream(s.seed, s.coordinators, s.durationS * 1000, "run");
      measuredStart = Date.now();
      hooks.onMeasureStart?.();
      loopDelay.enable();
      poll?.start();
      gen.startMeasuring(measuredStart, stream);
      const timer = setInterval(() => {
        const c = gen.counters;
        progress.update(
          "testbed",
          (Date.now() - measuredStart) / 1000,
          s.durationS,
          `calls ${c.done}/${c.sent}  failed ${c.failed}  direct fan-outs ${c.measured}`,
        );
      }, 250);
      await gen.run(stream, s.policies, true).finally(() => clearInterval(timer));
      gen.stop();
      await gen.drain();
      measuredEnd = Date.now();
      hooks.onMeasureEnd?.();
      loopDelay.disable();
      coordinatorLoops = await poll?.stop();
    }
  } finally {
    // stop() has closed it on the way through; a throw or an interrupted run leaves it to here
    poll?.close();
  }
  const measured = loopDelay.count > 0;
  return {
    measuredStart,
    measuredEnd,
    loopDelayMs: {
      p50: measured ? loopDelay.percentile(50) / 1e6 : null,
      p99: measured ? loopDelay.percentile(99) / 1e6 : null,
      max: measured ? loopDelay.max / 1e6 : null,
    },
    coordinatorLoopDelayMs: coordinatorLoops ?? {},
  };
}

/** What a driven run hands the report, beside the load generator's rows. */
export interface DrivenRun {
  readonly scenario: Scenario;
  readonly peers: readonly PeerPlan[];
  readonly decision: Parameters<typeof scoreContext>[1];
  readonly startedAt: Date;
  readonly interrupted: boolean;
  readonly gen: Pick<LoadGenerator, "calls" | "measures">;
  /** Undefined when the run was interrupted before the load started. */
  readonly driven: DriveResult | undefined;
  readonly processes: ProcessSummary | null;
}

/** The report of a driven run, launched or attached: the measured window, scoring and peer groups. */
export function driveReport(r: DrivenRun): Report {
  const s = r.scenario;
  const measuredStart = r.driven?.measuredStart ?? Date.now();
  const measuredEnd = Math.max(measuredStart, r.driven?.measuredEnd ?? measuredStart);
  return buildReport({
    scenario: s,
    startedAt: r.startedAt,
    durationS: (measuredEnd - measuredStart) / 1000,
    interrupted: r.interrupted,
    calls: r.gen.calls,
    measures: r.gen.measures,
    processes: r.processes,
    loopDelayMs: r.driven?.loopDelayMs ?? { p50: null, p99: null, max: null },
    coordinatorLoopDelayMs: r.driven?.coordinatorLoopDelayMs ?? {},
    score: scoreContext(r.peers, r.decision, s.valueModel.continuationMs),
    peerGroups: new Map(
      r.peers.map((p) => [p.id, p.gateway !== undefined ? `${p.region} behind ${p.gateway}` : p.region]),
    ),
  });
}

/** Where a driven run's report went. */
export interface RunFiles {
  readonly json: string;
  readonly html: string;
  readonly table: string;
}

/**
 * Writes a driven run's files to `outDir`: report.json, report.html (`html`), report.txt (`table`),
 * and the rows behind them, calls.jsonl and direct-fanouts.jsonl.
 */
export async function writeRunFiles(
  outDir: string,
  report: Report,
  html: string,
  table: string,
  gen: Pick<LoadGenerator, "calls" | "measures">,
): Promise<RunFiles> {
  const files = {
    json: join(outDir, "report.json"),
    html: join(outDir, "report.html"),
    table: join(outDir, "report.txt"),
  };
  await writeFile(files.json, JSON.stringify(report, null, 2));
  await writeFile(files.html, html);
  await writeFile(files.table, table);
  await writeFile(join(outDir, "calls.jsonl"), gen.calls.map((c) => JSON.stringify(c)).join("\n") + "\n");
  await writeFile(
    join(outDir, "direct-fanouts.jsonl"),
    gen.measures.map((m) => JSON.stringify(m)).join("\n") + "\n",
  );
  return files;
}
