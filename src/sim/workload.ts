/**
 * A workload of the slotted simulator: nodes, request classes with their stage graphs, the object
 * catalog and the true primitives `w, p, P` that service realises. Built by `mixedWorkload`.
 */
import type { PrimitiveTable } from "../routing/primitives.js";
import type { Commodity } from "../routing/types.js";

export interface SimNode {
  readonly id: string;
  /** Compute capacity μ_i, work units per slot. */
  readonly capacity: number;
  /** Memory budget B_i, size units. */
  readonly budget: number;
}

export interface StageSpec {
  readonly key: string;
  /** Memory-eligible: a compatible resident object changes its primitives. */
  readonly memory: boolean;
}

export interface RequestClass {
  readonly name: string;
  /** Share of exogenous arrivals. */
  readonly share: number;
  readonly stages: readonly StageSpec[];
  /** Number of state types z (the Zipf catalog of this class). */
  readonly stateTypes: number;
}

/** One memory object: content signature of (class, state type), shared by the class's memory stages. */
export interface SimObject {
  readonly signature: number;
  readonly size: number;
}

export interface Workload {
  readonly name: string;
  readonly nodes: readonly SimNode[];
  readonly classes: readonly RequestClass[];
  /** objects[classIndex][z]. */
  readonly objects: readonly (readonly SimObject[])[];
  /** commodities[classIndex][stage][z]. */
  readonly commodities: readonly (readonly (readonly Commodity[])[])[];
  /** The true primitives (what service realises, successor law including transition noise). */
  readonly truth: PrimitiveTable;
  /** Only the no-reuse entries (the prior of Learn-MABP). */
  readonly noReusePrior: PrimitiveTable;
  /** Per-unit transfer penalty d_ij between distinct nodes. */
  readonly transferPenalty: number;
  /** Exogenous request rate per slot at the run's load. */
  readonly arrivalRate: number;
  /** Expected work of one request with every memory-eligible stage a hit (the load's reference). */
  readonly referenceWork: number;
  /** Expected work of one request with no memory. */
  readonly noMemoryWork: number;
}
