/**
 * The seed scenario as real processes, short: the report's fields, the orderings the seed predicts,
 * and no testbed process alive afterwards. Runs the built CLI (npm run build first).
 *
 * The orderings are asserted only when the run reproduced the seed's regime: the measured all-of-40
 * fan-out p50 below the seed coordinator's 90 ms budget and the p99 above it (what makes coord-90ms
 * the seed's coordinator). On a machine so loaded that the median fan-out no longer fits 90 ms, the
 * run measures the machine, and the test says so instead of asserting on it. (Until 2026-11-30 the
 * bar was 3x the model's p50, 64.5 ms: it skipped about one short run in three on an idle 2-core
 * machine, although the orderings held in every run measured, up to a p50 of 88 ms.)
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const MAIN = resolve("dist/cli/main.js");
const SEED_BUDGET_MS = 90; // coord-90ms, the seed's coordinator (testbed/scenarios/seed-nat-tail.yaml)

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
    it(
      "runs the seed scenario, reports every field, and leaves no process behind",
      { timeout: 240_000 },
      async (ctx) => {
        const out = mkdtempSync(join(tmpdir(), "tailswarm-testbed-"));
        const { code, stderr } = await runCli(["--duration", "12", "--warmup", "4", "--out", out]);
        expect(code, stderr).toBe(0);
        expect(processesUsing(out)).toEqual([]);
        const r = JSON.parse(readFileSync(join(out, "report.json"), "utf8"));
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
            "decision_relevant_commit_rate",
            "info_gain_per_committed_branch",
          ]) {
            expect(s[k] === null || typeof s[k] === "number", `${p}.${k}`).toBe(true);
          }
          expect(s.fanouts).toBeGreaterThan(0);
        }
        expect(r.sensitivity.length).toBeGreaterThan(1);
        expect(readFileSync(join(out, "report.html"), "utf8")).toContain("<svg");

        const { fanout_p50_ms: p50, fanout_p99_ms: p99 } = r.measured;
        console.info(`measured fan-out p50 ${p50} ms, p99 ${p99} ms`);
        if (!(p50 < SEED_BUDGET_MS && p99 > SEED_BUDGET_MS)) {
          ctx.skip(
            `orderings not asserted: measured fan-out p50 ${p50} ms, p99 ${p99} ms, not around the seed's ${SEED_BUDGET_MS} ms budget (p50 < budget < p99) — the machine, not the scenario, set the latency`,
          );
        }
        const naive = r.policies["naive-p50"];
        const rule = r.policies["p99-boundary"];
        // What every run shows, short or long: the rule speculates less (commits per fan-out down),
        // loses less peer work (abandon cost per fan-out down: it speculates less, and its
        // synchronous fan-outs cancel nothing), and comes out ahead on net value at every point of
        // the sensitivity grid (in 5 quiet runs the smallest margin was 8.8 per fan-out, at
        // abandonPerMs 0.1 with latencyPerMs 0.5, where naive-p50's overlap is worth most).
        expect(rule.commits_per_fanout).toBeLessThan(naive.commits_per_fanout);
        expect(rule.abandon_cost_ms_per_fanout).toBeLessThan(naive.abandon_cost_ms_per_fanout);
        for (const row of r.sensitivity) {
          const v = row.net_value_per_fanout;
          expect(v["p99-boundary"], JSON.stringify(row.weights)).toBeGreaterThan(v["naive-p50"]);
        }
        // The decision-relevant commit rate is printed, not asserted: a relevant commit needs a
        // gateway episode (~14% of requests) under a speculating coordinator, and in 12 s the rule
        // speculates only at coord-800ms, on a dozen requests, so it has none or one. The full run
        // shows the inversion (docs/testbed.md, "What the runs show").
        console.info(
          `decision-relevant commit rate: naive-p50 ${naive.decision_relevant_commit_rate}, p99-boundary ${rule.decision_relevant_commit_rate}`,
        );
        // Per instance: under the rule the coordinator whose budget sits between the fan-out's p50
        // and p99 (90 ms), and the one below its p50 (20 ms), never speculate. (The one well above
        // its p99, 800 ms, speculated on 19-60% of its requests in longer runs, but a 12 s run gives
        // it a dozen requests and one here had none: printed, not asserted.)
        const ruleBy = r.by_coordinator["p99-boundary"];
        expect(ruleBy["coord-90ms"].mode_mix.speculate).toBe(0);
        expect(ruleBy["coord-20ms"].mode_mix.speculate).toBe(0);
        console.info(`rule's speculation share at coord-800ms: ${ruleBy["coord-800ms"].mode_mix.speculate}`);
        console.info(`seed predictions on this run: ${JSON.stringify(r.checks)}`);
      },
    );

    it(
      "Ctrl-C stops the load and every node, and still writes the report",
      { timeout: 180_000 },
      async () => {
        const out = mkdtempSync(join(tmpdir(), "tailswarm-testbed-int-"));
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
