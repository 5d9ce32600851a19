/**
 * What the demo does with its swarm: one fan-out before anything is known (the rule never speculates
 * on an unknown estimate), enough fan-outs to make every peer's estimate fresh (estimator.minSamples
 * answers in estimator.windowMs) and the fan-out p99 known (about 100), then three budgets chosen from the coordinator's own fresh fan-out
 * p50/p99: well above p99 + abandon cost, between p50 and p99, below p50. Each step's decision is
 * read back from the coordinator's flight recorder (what `tailswarm decisions` shows). The budgets
 * follow the measured numbers, so the three modes come out on a fast or a slow machine; when the
 * estimate moves between choosing a budget and deciding it, the step is tried again with the new one.
 */
import { NodeClient } from "../../node/client.js";
import type { CoordinateAnswer } from "../../node/client.js";
import type { StatusReply__Output } from "../../mesh/gen/tailswarm/v1/StatusReply.js";
import type { DecisionRecord } from "../../telemetry/flight-recorder.js";
import type { DemoSwarm } from "./swarm.js";

export type Target = "speculate" | "synchronous" | "degrade";

export interface DemoStep {
  readonly target: Target | "unknown";
  /** What the budget was chosen as, for people. */
  readonly budgetChoice: string;
  readonly deadlineMs: number;
  readonly question: string;
  readonly answer: CoordinateAnswer;
  /** The coordinator's record of the fan-out (reason, `because`, the numbers). */
  readonly decision: DecisionRecord;
  /** Tries it took (the estimate can move between choosing the budget and deciding). */
  readonly attempts: number;
}

export interface DemoRun {
  /** The fan-out before any estimate was fresh. */
  readonly first: DemoStep;
  readonly warmup: {
    readonly fanouts: number;
    readonly seconds: number;
    /** The last warm-up decision: the fresh fan-out estimate the first budget is chosen from. */
    readonly last: DecisionRecord;
  };
  /** Peers as the coordinator saw them once fresh. */
  readonly status: StatusReply__Output;
  /** Deadline minus the budget the coordinator decided on (the deadline reserve and transit), median, ms. */
  readonly overheadMs: number;
  readonly steps: readonly DemoStep[];
}

const WARMUP_DEADLINE_MS = 2_000;
const WARMUP_BATCH = 6;
const WARMUP_MAX_FANOUTS = 300;
const MAX_ATTEMPTS = 5;

export interface DemoOptions {
  readonly signal: AbortSignal;
  /** One line of progress (the verb prints it or not). */
  readonly progress: (line: string) => void;
}

function aborted(signal: AbortSignal): void {
  if (signal.aborted) throw new DOMException("the demo was stopped", "AbortError");
}

const median = (values: readonly number[]): number => {
  const s = [...values].sort((a, b) => a - b);
  return s.length === 0 ? 0 : s[Math.floor(s.length / 2)]!;
};

/** The budget of each step, from the latest fresh numbers. */
function budgetFor(target: Target, d: DecisionRecord): { budgetMs: number; choice: string } {
  const p50 = d.fanoutP50Ms ?? 0;
  const tail = (d.fanoutP99Ms ?? 0) + (d.abandonCostMs ?? 0);
  switch (target) {
    case "speculate":
      return { budgetMs: 2 * tail + 50, choice: "well above p99 + abandon cost" };
    case "synchronous":
      // near the tail end of the interval, so that answers arrive within it on a loaded machine too
      return { budgetMs: p50 + 0.8 * (tail - p50), choice: "between p50 and p99 + abandon cost" };
    case "degrade":
      return { budgetMs: p50 / 2, choice: "below p50" };
  }
}

export async function runDemo(swarm: DemoSwarm, options: DemoOptions): Promise<DemoRun> {
  const { signal, progress } = options;
  const client = new NodeClient(swarm.coordinator);
  signal.addEventListener("abort", () => client.close(), { once: true });
  let n = 0;
  const fanOut = async (deadlineMs: number): Promise<{ question: string; answer: CoordinateAnswer }> => {
    const question = `demo-${++n}`;
    const answer = await client.coordinate({ kind: "vote", payload: { question } }, deadlineMs);
    return { question, answer };
  };
  const recordOf = async (fanoutId: string): Promise<DecisionRecord> => {
    const found = (await client.decisions(16)).decisions.find((d) => d.fanoutId === fanoutId);
    if (found === undefined) throw new Error(`the coordinator has no record of fan-out ${fanoutId}`);
    return found;
  };

  try {
    aborted(signal);
    // 1. Nothing is known yet.
    const one = await fanOut(WARMUP_DEADLINE_MS);
    const firstDecision = await recordOf(one.answer.fanoutId);
    const first: DemoStep = {
      target: "unknown",
      budgetChoice: "generous, before any estimate",
      deadlineMs: WARMUP_DEADLINE_MS,
      question: one.question,
      answer: one.answer,
      decision: firstDecision,
      attempts: 1,
    };
    progress(`first fan-out: ${first.decision.mode} (${first.decision.reason}); warming up`);

    // 2. Enough fan-outs that every peer's window holds minSamples answers.
    const started = Date.now();
    const ids: string[] = [one.answer.fanoutId];
    let status: StatusReply__Output | undefined;
    while (ids.length < WARMUP_MAX_FANOUTS) {
      aborted(signal);
      const batch = await Promise.all(Array.from({ length: WARMUP_BATCH }, () => fanOut(WARMUP_DEADLINE_MS)));
      ids.push(...batch.map((b) => b.answer.fanoutId));
      status = await client.status();
      const fresh = status.peers.filter((p) => p.estimateStatus === "fresh").length;
      // a p99 is known once the window holds about 100 fan-outs (docs/value-model.md): until then the rule
      // does not speculate, so the demo's first budget would not show it
      const known = batch.every(
        (b) => b.answer.reason !== "estimate-unknown" && b.answer.fanoutP99Kind === "known",
      );
      if (fresh === swarm.peers.length && known) break;
    }
    if (status === undefined) throw new Error("no status from the coordinator");
    const seconds = (Date.now() - started) / 1000;
    const recent = (await client.decisions(ids.length)).decisions;
    const overheadMs = median(
      recent.filter((d) => d.budgetMs !== null).map((d) => WARMUP_DEADLINE_MS - d.budgetMs!),
    );
    const warm = recent[0]!;
    if (warm.size !== swarm.peers.length || warm.estimateStatus !== "fresh") {
      throw new Error(
        `after ${ids.length} fan-outs the coordinator's estimate is ${warm.estimateStatus} over ${warm.size} of ${swarm.peers.length} peers`,
      );
    }
    let latest = warm;
    // What the coordinator takes off the deadline moves with its measured reply time: each attempt
    // learns it from the last decision.
    let overhead = overheadMs;
    progress(`warm-up: ${ids.length} fan-outs in ${seconds.toFixed(1)} s`);

    // 3. Three budgets from the coordinator's own numbers.
    const steps: DemoStep[] = [];
    for (const target of ["speculate", "synchronous", "degrade"] as const) {
      let step: DemoStep | undefined;
      for (let attempt = 1; attempt <= MAX_ATTEMPTS && step?.decision.mode !== target; attempt++) {
        aborted(signal);
        const { budgetMs, choice } = budgetFor(target, latest);
        const deadlineMs = Math.max(1, Math.round(budgetMs + overhead));
        const { question, answer } = await fanOut(deadlineMs);
        latest = await recordOf(answer.fanoutId);
        if (latest.budgetMs !== null) overhead = deadlineMs - latest.budgetMs;
        step = {
          target,
          budgetChoice: choice,
          deadlineMs,
          question,
          answer,
          decision: latest,
          attempts: attempt,
        };
      }
      steps.push(step!);
      progress(`budget ${step!.budgetChoice}: ${step!.decision.mode} (${step!.decision.reason})`);
    }
    return {
      first,
      warmup: { fanouts: ids.length, seconds, last: warm },
      status,
      overheadMs,
      steps,
    };
  } finally {
    client.close();
  }
}
