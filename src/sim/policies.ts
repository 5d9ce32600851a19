/**
 * The evaluated policies: each is a routing policy of src/routing, a service order at the node, and a
 * retention rule. All share feasibility and the realised primitives; only ranking differs (Section VI-A).
 */
import type { RetentionPolicyName } from "../routing/retention.js";
import type { RoutingPolicyName } from "../routing/types.js";

export type SimPolicyName =
  "SP" | "JSQ" | "BP" | "Cost-BP" | "GreedyCache-BP" | "Affinity" | "MABP" | "Learn-MABP";

/**
 * Service order at a node: `fifo`; `oblivious` max-weight on memory-averaged primitives (BP family;
 * `withPenalty` adds ν·p̄); `mabp`, the memory-augmented weight per unit of work of the head unit.
 */
export type ServiceOrder = "fifo" | "oblivious" | "oblivious-cost" | "mabp";

export interface SimPolicy {
  readonly name: SimPolicyName;
  readonly router: RoutingPolicyName;
  readonly service: ServiceOrder;
  readonly retention: RetentionPolicyName;
  /** Primitives learned online from outcomes (Learn-MABP) instead of given. */
  readonly learned?: boolean;
}

export const SIM_POLICIES: Readonly<Record<SimPolicyName, SimPolicy>> = Object.freeze({
  SP: { name: "SP", router: "shortest-path", service: "fifo", retention: "lru" },
  JSQ: { name: "JSQ", router: "jsq", service: "fifo", retention: "lru" },
  BP: { name: "BP", router: "bp", service: "oblivious", retention: "lru" },
  "Cost-BP": { name: "Cost-BP", router: "cost-bp", service: "oblivious-cost", retention: "lru" },
  "GreedyCache-BP": { name: "GreedyCache-BP", router: "bp", service: "oblivious", retention: "popularity" },
  Affinity: { name: "Affinity", router: "affinity", service: "fifo", retention: "lru" },
  MABP: { name: "MABP", router: "mabp", service: "mabp", retention: "marginal-value" },
  "Learn-MABP": {
    name: "Learn-MABP",
    router: "mabp",
    service: "mabp",
    retention: "marginal-value",
    learned: true,
  },
});

/** Rows of the paper's Table I that we implement, in its order. */
export const TABLE1_POLICIES: readonly SimPolicyName[] = [
  "SP",
  "JSQ",
  "BP",
  "Cost-BP",
  "GreedyCache-BP",
  "MABP",
];

/** Extra rows we also report (not in the paper's Table I, or not with these names). */
export const EXTRA_POLICIES: readonly SimPolicyName[] = ["Affinity", "Learn-MABP"];
