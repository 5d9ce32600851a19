/**
 * A testbed scenario, validated: the types of the scenario schema (scenario-schema.ts, where each
 * field is documented). Every peer is a real `tailswarm node` process serving the `vote` task through
 * the `synthetic` latency model; every coordinator is a node that fans out to all the peers.
 */
import type { z } from "zod";
import type { scenarioSchema } from "./scenario-schema.js";

type Parsed = z.output<typeof scenarioSchema>;

export interface Scenario extends Omit<Parsed, "node"> {
  /** File it came from (absolute), or "" when built in code. */
  readonly file: string;
  /** Node config keys merged into every generated node config, as the scenario gives them. */
  readonly node: Readonly<Record<string, unknown>>;
}

export type RegionSpec = Scenario["regions"][number];
export type GatewaySpec = Scenario["gateways"][number];
export type CoordinatorSpec = Scenario["coordinators"][number];
/**
 * The decision workload: a weighted vote between `options`. The peers behind a gateway see events
 * first (they answer the truth); every other peer answers the stale prior. A request's truth is
 * `event` while a gateway episode is in progress when it is sent, `prior` otherwise.
 */
export type WorkloadSpec = Scenario["workload"];
export type ValueModelSpec = Scenario["valueModel"];
export type ValueWeights = ValueModelSpec["weights"];
