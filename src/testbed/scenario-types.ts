/**
 * A testbed scenario, validated (scenario-loader.ts builds it from a YAML or JSON file in
 * testbed/scenarios/). Every peer is a real `tailswarm node` process serving the `vote` task through
 * the `synthetic` latency model; every coordinator is a node that fans out to all the peers.
 */
import type { PolicyName } from "../policy/types.js";
import type { LognormalBody, ParetoTail } from "../peers/latency-model.js";

export interface RegionSpec {
  readonly name: string;
  /** Peers in the region (gateway peers included). */
  readonly peers: number;
  readonly body: LognormalBody;
  readonly tail?: ParetoTail;
  /** Each peer's median is the region's times exp(spread · z), z a seeded standard normal. 0 = identical. */
  readonly medianSpread: number;
}

export interface GatewaySpec {
  /** Peers of one group queue together (the latency model's gateway group). */
  readonly group: string;
  /** Region whose first `peers` peers sit behind the gateway. */
  readonly region: string;
  readonly peers: number;
  readonly episodesPerSecond: number;
  readonly durationMs: { readonly min: number; readonly max: number };
}

export interface CoordinatorSpec {
  readonly name: string;
  /** The caller's budget: sent as the gRPC deadline of every Coordinate call, ms. */
  readonly budgetMs: number;
  /** Requests per second (Poisson arrivals, seeded). Each request is sent once under every policy. */
  readonly ratePerS: number;
}

/**
 * The decision workload: a weighted vote between `options`. The peers behind a gateway see events
 * first (they answer the truth); every other peer answers the stale prior. A request's truth is
 * `event` while a gateway episode is in progress when it is sent, `prior` otherwise.
 */
export interface WorkloadSpec {
  readonly options: readonly [string, string, ...string[]];
  readonly prior: string;
  readonly event: string;
  /**
   * Weight of one gateway peer's vote; `auto` = the smallest integer that lets the gateway peers
   * together outvote everyone else (and makes each of them pivotal when the rest vote the prior).
   */
  readonly gatewayWeight: number | "auto";
}

export interface ValueWeights {
  /** Value of a correct decision. */
  readonly correct: number;
  /** Cost per ms from request to the end of the coordinator's continuation. */
  readonly latencyPerMs: number;
  /** Cost per ms of work thrown away (peers' lost work and the coordinator's discarded speculation). */
  readonly abandonPerMs: number;
  /** Cost of a missed deadline (no decision within the budget). */
  readonly miss: number;
}

export interface ValueModelSpec {
  /** The coordinator's own work after the decision (its continuation), ms. */
  readonly continuationMs: number;
  readonly weights: ValueWeights;
  /** Sensitivity grid: every combination of these values is reported. */
  readonly grid: { readonly [K in keyof ValueWeights]: readonly number[] };
}

export interface Scenario {
  readonly name: string;
  readonly description: string;
  /** File it came from (absolute), or "" when built in code. */
  readonly file: string;
  readonly seed: number;
  readonly durationS: number;
  /** Load before the measured run, so every coordinator has fresh estimates; not counted. */
  readonly warmupS: number;
  readonly regions: readonly RegionSpec[];
  readonly gateways: readonly GatewaySpec[];
  readonly coordinators: readonly CoordinatorSpec[];
  readonly workload: WorkloadSpec;
  readonly policies: readonly PolicyName[];
  /** Direct all-peer fan-outs per second, outside every policy: the measured fan-out p50/p99. */
  readonly measureRatePerS: number;
  /** Node config keys merged into every generated node config (estimator, deadlineReserveMs, ...). */
  readonly node: Readonly<Record<string, unknown>>;
  readonly valueModel: ValueModelSpec;
}
