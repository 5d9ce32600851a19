/**
 * The founding note's scenario as real processes, short: the report's fields, the rule's modes against
 * the measured fan-out (asserted in every run), the orderings the note predicts, and no testbed process
 * alive afterwards. Runs the built CLI (npm run build first).
 *
 * The orderings are asserted only when the run reproduced the note's regime: the measured all-of-40
 * fan-out p50 below the 90 ms budget of the note's coordinator (coord-90ms) and the p99 above it. On
 * a machine so loaded that the median fan-out no longer fits 90 ms, the run measures the machine, and
 * the test says so instead of asserting on it.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { DEGRADE_MIN_SHARE, NO_SPECULATION_MAX_SHARE } from "../../src/testbed/predictions.js";
import { scratchDir } from "../support/scratch-dir.js";

const MAIN = resolve("dist/cli/main.js");
const SEED_BUDGET_MS = 90; // coord-90ms, the founding note's coordinator (testbed/scenarios/seed-nat-tail.yaml)

function runCli(args: string[], interruptAfterMs?: number): Promise<{ code: number | null; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [MAIN, "testbed", ...args], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d: Buffer) => {
      stderr += d.toString();
      if (interruptAfterMs !== undefined && /^testbed \d/m.test(stderr)) {
        setTimeout(() => child.kill("SIGINT"), interruptAfterMs);
        interruptAfterMs = undefined;
      }
    });
    child.on("exit", (code) => done({ code, stderr }));
  });
}

/** Processes whose command line mentions `dir` (the run's node configs live there). */
function processesUsing(dir: string): string[] {
  const out: string[] = [];
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ");
      if (cmd.includes(dir)) out.push(`${pid} ${cmd}`);
    } catch {
      // gone
    }
  }
  return out;
}

describe.skipIf(!existsSync(MAIN) || process.platform !== "linux")(
  "tailswarm testbed (real processes)",
  () => {
    const scratch = scratchDir("testbed");
    // One short run of the founding note's scenario, read by the three tests below.
    let seedRun: Promise<{ out: string; code: number | null; stderr: string }> | undefined;
    const seed = (): Promise<{ out: string; code: number | null; stderr: string }> => {
      seedRun ??= (async () => {
        const out = mkdtempSync(join(scratch(), "seed-"));
        return { out, ...(await runCli(["--duration", "12", "--warmup", "4", "--out", out])) };
      })();
      return seedRun;
    };
    // report.json as parsed: read field by field, as a user of the file would
    const report = async (): Promise<ReturnType<typeof JSON.parse>> => {
      const { out, code, stderr } = await seed();
      expect(code, stderr).toBe(0);
      return JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
    };

    it(
      "runs the founding note's scenario, reports every field, and leaves no process behind",
      { timeout: 240_000 },
      async () => {
        const { out, code, stderr } = await seed();
        expect(code, stderr).toBe(0);
        expect(processesUsing(out)).toEqual([]);
        const r = await report();
        expect(r.scenario).toBe("seed-nat-tail");
        expect(r.processes.left_running).toEqual([]);
        expect(typeof r.measured.fanout_p50_ms).toBe("number");
        expect(typeof r.measured.fanout_p99_ms).toBe("number");
        for (const p of ["naive-p50", "p99-boundary", "always-sync", "never"]) {
          const s = r.policies[p];
          for (const k of [
            "fanouts",
            "speculative_branches",
            "commits_per_fanout",
            "abandon_cost_ms_per_fanout",
            "deadline_misses",
            "accuracy",
            "net_value_per_fanout",
          ]) {
            expect(typeof s[k], `${p}.${k}`).toBe("number");
          }
          for (const k of [
            "commit_rate",
            "fanout_decision_relevant_commit_rate",
            "pivotal_commit_rate",
            "would_flip_share_of_abandoned",
            "info_gain_per_committed_branch",
          ]) {
            expect(s[k] === null || typeof s[k] === "number", `${p}.${k}`).toBe(true);
          }
          expect(s.fanouts).toBeGreaterThan(0);
        }
        expect(r.sensitivity.length).toBeGreaterThan(1);
        expect(readFileSync(join(out, "report.html"), "utf8")).toContain("<svg");
      },
    );

    it(
      "under the rule, a coordinator below the measured fan-out p99 does not speculate, and one below the p50 degrades",
      { timeout: 240_000 },
      async () => {
        const r = await report();
        const { fanout_p50_ms: p50, fanout_p99_ms: p99 } = r.measured;
        console.info(`measured fan-out p50 ${p50} ms, p99 ${p99} ms`);
        // Per instance, against the measured fan-out (the verdict's bars), whatever the regime: under
        // the rule a coordinator whose budget is below the measured p99 speculates on at most 1% of its
        // requests, and one below the measured p50 degrades on at least 90% of the requests it
        // answers. The one well above its p99 (800 ms) may speculate or not (its abandon cost and own
        // estimate decide): printed, not asserted.
        const ruleBy = r.by_coordinator["p99-boundary"];
        const budgets: Record<string, number> = r.series.budgets;
        for (const [c, budget] of Object.entries(budgets)) {
          const mix = ruleBy[c].mode_mix;
          const answered = 1 - (mix.error ?? 0);
          const degraded = answered <= 0 ? 0 : mix.degrade / answered;
          console.info(
            `rule at ${c} (budget ${budget} ms; measured p50 ${p50}, p99 ${p99}; its p99 estimate, median, ${r.measured.coordinator_estimates[c].p99_ms}): speculated on ${mix.speculate}, degraded on ${degraded.toFixed(4)} of answered, mode mix ${JSON.stringify(mix)}`,
          );
          if (budget < p99)
            expect(mix.speculate, `${c} speculated`).toBeLessThanOrEqual(NO_SPECULATION_MAX_SHARE);
          if (budget < p50) expect(degraded, `${c} degraded`).toBeGreaterThanOrEqual(DEGRADE_MIN_SHARE);
        }
      },
    );

    it(
      "in the founding note's regime, the rule makes fewer speculative commits and abandons less work than naive-p50",
      { timeout: 240_000 },
      async (ctx) => {
        const r = await report();
        const { fanout_p50_ms: p50, fanout_p99_ms: p99 } = r.measured;
        if (!(p50 < SEED_BUDGET_MS && p99 > SEED_BUDGET_MS)) {
          ctx.skip(
            `orderings not asserted: measured fan-out p50 ${p50} ms, p99 ${p99} ms, not around the founding note's ${SEED_BUDGET_MS} ms budget (p50 < budget < p99) — the machine, not the scenario, set the latency`,
          );
        }
        const naive = r.policies["naive-p50"];
        const rule = r.policies["p99-boundary"];
        const paired = r.rule_vs_naive;
        console.info(
          `rule - naive on ${paired.pairs} requests: commits ${JSON.stringify(paired.commits_per_fanout)}, abandon ${JSON.stringify(paired.abandon_cost_ms_per_fanout)}, net value ${JSON.stringify(paired.net_value_per_fanout)}`,
        );
        // What every run shows, short or long: the rule speculates less (commits per fan-out down) and
        // abandons less work (abandon cost per fan-out down: it speculates less, and its synchronous
        // fan-outs cancel nothing — what they let run past the decision is redundant work, which
        // net value charges, not abandon cost).
        expect(rule.commits_per_fanout, JSON.stringify(paired)).toBeLessThan(naive.commits_per_fanout);
        expect(rule.abandon_cost_ms_per_fanout, JSON.stringify(paired)).toBeLessThan(
          naive.abandon_cost_ms_per_fanout,
        );
        // Net value is printed, not asserted. Peer work is charged the same whatever the mode (a
        // synchronous fan-out pays for the answers it let finish after the vote was settled), and a
        // 12 s run leaves the rule synchronous at coord-800ms on most requests (its estimates are
        // still unknown): there the rule may be below naive-p50 where latency is dear and waste cheap.
        // The report's paired intervals say how sure a run is (checks.rule_net_value_*).
        for (const row of r.sensitivity) {
          console.info(
            `net value rule - naive at ${JSON.stringify(row.weights)}: ${JSON.stringify(row.rule_minus_naive)}`,
          );
        }
        const margins = r.sensitivity.map(
          (row: { net_value_per_fanout: Record<string, number> }) =>
            row.net_value_per_fanout["p99-boundary"]! - row.net_value_per_fanout["naive-p50"]!,
        );
        console.info(
          `net value rule - naive: smallest margin on the grid ${Math.min(...margins).toFixed(2)}`,
        );
        // The decision-relevant commit rates are printed, not asserted: a relevant commit needs a
        // gateway episode (~14% of requests) under a speculating coordinator, and in a short run the
        // rule speculates only at coord-800ms, on a few dozen requests.
        console.info(
          `decision-relevant commit rate (per committed fan-out): naive-p50 ${naive.fanout_decision_relevant_commit_rate}, p99-boundary ${rule.fanout_decision_relevant_commit_rate}, rule - naive ${JSON.stringify(paired.fanout_decision_relevant_commit_rate)}; pivotal (per branch): ${naive.pivotal_commit_rate}, ${rule.pivotal_commit_rate}`,
        );
        console.info(
          `the note's observation at coord-90ms: ${JSON.stringify(r.seed_observation["naive-p50"]["coord-90ms"])}`,
        );
        console.info(`seed predictions on this run: ${JSON.stringify(r.checks)}`);
      },
    );

    it(
      "Ctrl-C stops the load and every node, and still writes the report",
      { timeout: 180_000 },
      async () => {
        const out = mkdtempSync(join(scratch(), "interrupted-"));
        const { code } = await runCli(
          ["--scenario", "smoke", "--duration", "60", "--warmup", "1", "--out", out],
          2_000,
        );
        expect(code).toBe(130);
        expect(processesUsing(out)).toEqual([]);
        const r = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
        expect(r.interrupted).toBe(true);
        expect(r.processes.left_running).toEqual([]);
        expect(r.duration_s).toBeLessThan(30);
      },
    );
  },
);
