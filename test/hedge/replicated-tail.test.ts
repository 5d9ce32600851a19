/**
 * The replicated-tail scenario as real processes, short: the report's fields for every budget and
 * policy, no backup of the budget-gated policy that could not land (at every budget), the baselines'
 * backups at the budget below the replicas' p99 all counted as unlandable, and no process left
 * behind. Runs the built CLI (npm run build first). Figures are not asserted: a few seconds on a
 * shared machine measure the machine.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { MAIN, tailswarm } from "../cli/dist.js";
import type { ReplicatedReport } from "../../src/testbed/replicated/report.js";
import { scratchDir } from "../support/scratch-dir.js";

const POLICIES = ["gated", "none", "fixed-delay", "percentile", "p95"];
const CELL_FIELDS = [
  "requests",
  "answered_by_all",
  "errors",
  "refused_backup_p99_median_ms",
  "p50_ms",
  "p99_ms",
  "p999_ms",
  "p99_is_lower_bound",
  "p999_is_lower_bound",
  "deadline_misses",
  "extra_load_pct",
  "backups",
  "backups_won",
  "backups_unlandable",
  "cut_work_ms_per_request",
  "refused",
];

describe.skipIf(!existsSync(MAIN) || process.platform !== "linux")(
  "testbed --scenario replicated-tail",
  () => {
    const scratch = scratchDir("replicated");
    it(
      "reports every policy at every budget, and gated sends no backup that cannot land",
      { timeout: 180_000 },
      async () => {
        const out = scratch();
        const r = await tailswarm(
          ["testbed", "--scenario", "replicated-tail", "--duration", "5", "--warmup", "4", "--out", out],
          { timeoutMs: 170_000 },
        );
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain("budget 120 ms (below the replicas' p99)");
        const report = JSON.parse(
          readFileSync(join(out, "replicated-report.json"), "utf8"),
        ) as ReplicatedReport;
        expect(report.processes.left_running).toEqual([]);
        expect(report.replica_p99_model_ms).toHaveLength(3);
        expect(report.budgets.map((b) => b.budget_ms)).toEqual([120, 400, 1000]);
        for (const b of report.budgets) {
          expect(Object.keys(b.policies)).toEqual(POLICIES);
          for (const p of POLICIES) {
            const c = b.policies[p]!;
            expect(Object.keys(c).sort()).toEqual([...CELL_FIELDS].sort());
            expect(c.requests).toBeGreaterThan(0);
          }
          expect(b.gated_versus.map((v) => v.baseline)).toEqual(POLICIES.slice(1));
          expect(b.policies.gated!.backups_unlandable).toBe(0);
          expect(b.policies.none!.backups).toBe(0);
          expect(typeof b.goal.because).toBe("string");
        }
        const below = report.budgets.find((b) => b.below_replica_p99)!;
        expect(below.budget_ms).toBe(120);
        // fixed-delay hedges at 80 ms: with under 40 ms left, no backup there can land
        expect(below.policies["fixed-delay"]!.backups_unlandable).toBe(
          below.policies["fixed-delay"]!.backups,
        );
      },
    );
  },
);
