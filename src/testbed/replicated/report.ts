/** The replicated scenario's report (replicated-report.json): what run-replicated.ts writes. */
import type { ReplicatedScenario } from "./scenario.js";
import type { BudgetReport } from "./score.js";

export interface ReplicatedReport {
  readonly scenario: string;
  readonly seed: number;
  readonly duration_s: number;
  readonly warmup_s: number;
  readonly replicas: number;
  readonly k: number;
  readonly policies: readonly string[];
  readonly hedge: ReplicatedScenario["hedge"];
  /** Each replica's p99 as its latency model implies it (sampled), ms. */
  readonly replica_p99_model_ms: readonly number[];
  readonly budgets: readonly BudgetReport[];
  /** Measured calls that ended in a gRPC error (no reply in time), by code: counted as misses. */
  readonly errors: Record<string, number>;
  readonly processes: { readonly launched: number; readonly left_running: readonly string[] };
  readonly interrupted: boolean;
}
