/**
 * `tailswarm demo`: in well under a minute, the three modes with reasons that are true for the
 * numbers the coordinator decided on, and no process left behind — also when it is stopped midway.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { REASONS } from "../../src/policy/reasons.js";
import type { Reason } from "../../src/policy/types.js";
import { cleanEnv, ROOT } from "../node/helpers/spawn-node.js";
import { MAIN, tailswarm } from "./dist.js";

interface Decision {
  mode: string;
  reason: Reason;
  because: string;
  budgetMs: number;
  fanoutP50Ms: number;
  fanoutP99Ms: number;
  abandonCostMs: number;
  estimateStatus: string;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Pids of the processes whose parent is `pid` (Linux /proc). */
function children(pid: number): number[] {
  const out: number[] = [];
  for (const line of readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim().split(/\s+/)) {
    if (line !== "") out.push(Number(line));
  }
  return out;
}

describe("tailswarm demo", () => {
  it("shows speculate, synchronous and degrade with true reasons, in under a minute, exit 0, no process left", async () => {
    const started = Date.now();
    const r = await tailswarm(["demo", "--json"], { timeoutMs: 60_000 });
    const seconds = (Date.now() - started) / 1000;
    expect(r.code, r.stderr).toBe(0);
    expect(seconds).toBeLessThan(60);
    const out = JSON.parse(r.stdout) as {
      swarm: { pid: number; coordinator: string; peers: { id: string }[] };
      first: { decision: Decision };
      steps: { target: string; decision: Decision }[];
    };
    expect(out.swarm.peers.map((p) => p.id)).toEqual(["fast-1", "fast-2", "slow"]);
    // Before the estimates are fresh the rule does not speculate, however generous the budget.
    expect(out.first.decision).toMatchObject({ mode: "synchronous", reason: "estimate-unknown" });
    expect(out.steps.map((s) => s.decision.mode)).toEqual(["speculate", "synchronous", "degrade"]);
    for (const { decision: d } of out.steps) {
      expect(REASONS[d.reason].mode).toBe(d.mode);
      expect(d.estimateStatus).toBe("fresh");
      const tail = d.fanoutP99Ms + d.abandonCostMs;
      if (d.mode === "speculate") {
        expect(d.reason).toBe("budget-exceeds-p99-plus-abandon-cost");
        expect(d.budgetMs).toBeGreaterThan(tail);
      } else if (d.mode === "synchronous") {
        expect(d.reason).toBe("budget-between-p50-and-p99-plus-abandon-cost");
        expect(d.budgetMs).toBeGreaterThan(d.fanoutP50Ms);
        expect(d.budgetMs).toBeLessThanOrEqual(tail);
      } else {
        expect(d.reason).toBe("budget-at-or-below-p50");
        expect(d.budgetMs).toBeLessThanOrEqual(d.fanoutP50Ms);
      }
      // The inequality is printed with these numbers (rounded to 0.1 ms).
      expect(d.because).toContain(`budget ${Number(d.budgetMs.toFixed(1))} ms`);
    }
    expect(alive(out.swarm.pid)).toBe(false);
    expect(r.stderr).toContain("stopped the swarm: no process left");
  }, 90_000);

  it("prints the story for people: each mode, its reason and the command that reproduces it", async () => {
    const r = await tailswarm(["demo"], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/SYNCHRONOUS \(estimate-unknown\)/);
    expect(r.stdout).toMatch(
      /SPECULATE \(budget-exceeds-p99-plus-abandon-cost\)\n {3}because budget [\d.]+ ms > p99/,
    );
    expect(r.stdout).toMatch(
      /SYNCHRONOUS \(budget-between-p50-and-p99-plus-abandon-cost\)\n {3}because p50 [\d.]+ ms < budget/,
    );
    expect(r.stdout).toMatch(/DEGRADE \(budget-at-or-below-p50\)\n {3}because budget [\d.]+ ms <= p50/);
    expect(r.stdout).toMatch(
      /\$ tailswarm coordinate 127\.0\.0\.1:\d+ --task vote --payload '\{"question":"demo-\d+"\}' --deadline-ms \d+/,
    );
    expect(r.stdout).toContain("tailswarm decisions 127.0.0.1:");
  }, 90_000);

  it.each(["SIGTERM", "SIGINT"] as const)(
    "%s midway: stops the swarm, leaves no process",
    async (signal) => {
      const child = spawn(process.execPath, [MAIN, "demo", "--keep"], {
        cwd: ROOT,
        env: cleanEnv(),
        stdio: ["ignore", "pipe", "pipe"],
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
      let stdout = "";
      child.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      // Up: the swarm is listed (its host process is a child of the demo).
      const hostPid = await new Promise<number>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`the demo did not start: ${stdout}`)), 60_000);
        child.stdout.on("data", () => {
          const pid = /process \(pid (\d+)\)/.exec(stdout)?.[1];
          if (pid !== undefined) {
            clearTimeout(t);
            resolve(Number(pid));
          }
        });
      });
      expect(children(child.pid!)).toContain(hostPid);
      child.kill(signal);
      expect(await exited).toBe(signal === "SIGTERM" ? 143 : 130);
      expect(alive(hostPid)).toBe(false);
    },
    90_000,
  );
});
