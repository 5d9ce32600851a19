/**
 * Runs the agentic-context scenario: for every policy row, a fresh fleet of context-worker peers
 * (cold memory), the same seeded request stream, and the Table II metrics; writes
 * `agentic-report.json` and returns the rows and the printed table.
 */
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { contextWorkerPrimitives } from "../../peers/context-worker.js";
import type { AgenticScenario } from "./agentic-scenario.js";
import { startFleet } from "./peer-fleet.js";
import { requestStream } from "./request-mix.js";
import { runPolicy } from "./run-policy.js";
import type { RunPolicyOptions } from "./run-policy.js";
import { formatTable2, PAPER_TABLE2, table2Row } from "./table2.js";
import type { Table2Row } from "./table2.js";

export interface AgenticReport {
  readonly scenario: string;
  readonly rows: readonly Table2Row[];
  readonly table: string;
  readonly paper: typeof PAPER_TABLE2;
  readonly meta: { readonly startedAt: string; readonly wallS: number; readonly processes: boolean };
}

export interface RunAgenticOptions {
  /** Directory for agentic-report.json; none: not written. */
  readonly outDir?: string;
  readonly log?: (line: string) => void;
  /** Telemetry hooks for every row's coordinator. */
  readonly hooks?: Pick<RunPolicyOptions, "observer" | "wrapTransport" | "onViews">;
}

export async function runAgentic(
  s: AgenticScenario,
  options: RunAgenticOptions = {},
): Promise<AgenticReport> {
  const started = Date.now();
  const classes = s.classes.map((c) => c.name);
  const primitives = contextWorkerPrimitives(s.worker, classes);
  const stream = requestStream(s.classes, s.zipfSkew, s.ratePerS, (s.warmupS + s.durationS) * 1000, s.seed);
  const rows: Table2Row[] = [];
  for (const row of s.policies) {
    const workers = s.capacities.map((capacity, i) => ({
      ...s.worker,
      capacity,
      maxBacklog: s.maxBacklogPerSlot > 0 ? s.maxBacklogPerSlot * capacity : s.worker.maxBacklog,
      retention: row.retention,
      seed: s.worker.seed + i,
    }));
    const fleet = await startFleet({ workers, processes: s.processes });
    try {
      const records = await runPolicy({ scenario: s, row, stream, fleet, primitives, ...options.hooks });
      const r = table2Row(row.label, records, s.durationS, s.sloMs);
      rows.push(r);
      options.log?.(
        `${row.label}: ${r.requests} requests, hit ${r.hitRatio.toFixed(3)}, work ${r.workPerRequest.toFixed(2)}, p95 ${r.p95E2eMs.toFixed(0)} ms, drops ${(r.dropRate * 100).toFixed(1)}%`,
      );
    } finally {
      await fleet.stop();
    }
  }
  const table = formatTable2(rows, s.sloMs);
  const report: AgenticReport = {
    scenario: s.name,
    rows,
    table,
    paper: PAPER_TABLE2,
    meta: {
      startedAt: new Date(started).toISOString(),
      wallS: (Date.now() - started) / 1000,
      processes: s.processes,
    },
  };
  if (options.outDir !== undefined) {
    await mkdir(options.outDir, { recursive: true });
    await writeFile(join(options.outDir, "agentic-report.json"), JSON.stringify(report, null, 2));
  }
  return report;
}
