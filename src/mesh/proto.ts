/**
 * The loaded wire contract (proto/tailswarm/v1/swarm.proto) and TypeScript shapes of its messages,
 * as @grpc/proto-loader decodes them (camelCase fields, numbers for 64-bit values, defaults filled,
 * enums as strings, bytes as Buffer).
 */
import { fileURLToPath } from "node:url";
import type { MethodDefinition } from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";

/** Directory holding `tailswarm/v1/swarm.proto` (works from src/ and from dist/). */
export const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));
export const SWARM_PROTO_FILE = "tailswarm/v1/swarm.proto";
export const SWARM_SERVICE_NAME = "tailswarm.v1.Swarm";

export type BranchStatusName =
  | "BRANCH_STATUS_UNSPECIFIED"
  | "BRANCH_STATUS_ANSWERED"
  | "BRANCH_STATUS_ABANDONED"
  | "BRANCH_STATUS_EXPIRED";

export interface WireBranchRequest {
  fanoutId: string;
  branchId: string;
  kind: string;
  payload: Buffer | Uint8Array;
  origin: string;
  hop: number;
  deadlineUnixMs: number;
  deadlineGraceMs: number;
  /**
   * W3C trace context for callers whose metadata may not arrive (a proxy that drops headers); read only
   * when the metadata carries none. tailswarm's clients leave it unset: a set field, even empty, is
   * encoded (decoded: "" when absent).
   */
  traceparent?: string;
}

export interface WirePeerLoad {
  queueDepth: number;
  inFlight: number;
  capacity: number;
  /** Routing state of a routing-aware workload (null when the node has none). */
  routing?: WireRoutingState | null;
}

/** `RoutingState` (routing-state.ts converts it to and from src/routing's `RoutingAdvert`). */
export interface WireRoutingState {
  queues: Record<string, number>;
  signatures: number[];
  memoryUsed: number;
  memoryBudget: number;
  capacity: number;
  maxBacklog: number;
  stateAtUnixMs: number;
  served: number;
  hits: number;
  churn: number;
}

export interface WireBranchReply {
  status: BranchStatusName;
  answer: Buffer | Uint8Array;
  serviceMs: number;
  queueMs: number;
  lostWorkMs: number;
  load: WirePeerLoad | null;
  nodeId: string;
}

export interface WireCoordinateRequest {
  kind: string;
  payload: Buffer | Uint8Array;
  required: number;
  policy: string;
  budgetMs: number;
  decision: string;
  options: Buffer | Uint8Array;
}

export interface WireCoordinateReply {
  action: Buffer | Uint8Array;
  mode: string;
  reason: string;
  fanoutP50Ms: number;
  fanoutP99Ms: number;
  committed: number;
  abandoned: number;
  fanoutId: string;
  failed: number;
  late: number;
  degraded: boolean;
  decisionChanged: boolean;
  elapsedMs: number;
  abandonCostMs: number;
  violation: string;
  nodeId: string;
  branches: WireCoordinateBranch[];
  /** Absent when nothing was committed. */
  infoGainPerCommitted?: number;
  deadlineMissed: boolean;
  /** "observed" | "independent"; empty from nodes that do not say. */
  estimateBasis: string;
}

export interface WireCoordinateBranch {
  peer: string;
  outcome: string;
  decisionRelevant: boolean;
  latencyMs: number;
  lostWorkMs: number;
  unsettled: boolean;
}

export interface WireAbandonRequest {
  branchIds: string[];
}

export interface WireAbandonReply {
  matched: number;
}

export interface WireProbeRequest {
  sentUnixMs: number;
}

export interface WireProbeReply {
  sentUnixMs: number;
  nodeId: string;
  startedAtUnixMs: number;
  serverUnixMs: number;
}

export type WireStateRequest = Record<string, never>;

export interface WireStateReply {
  nodeId: string;
  region: string;
  queueDepth: number;
  inFlight: number;
  capacity: number;
  startedAtUnixMs: number;
  kinds: string[];
  coordinating: number;
  version: string;
  routing?: WireRoutingState | null;
}

/** The Swarm service's methods, typed. */
export interface SwarmServiceDefinition {
  Branch: MethodDefinition<Partial<WireBranchRequest>, WireBranchReply>;
  Coordinate: MethodDefinition<Partial<WireCoordinateRequest>, WireCoordinateReply>;
  Abandon: MethodDefinition<WireAbandonRequest, WireAbandonReply>;
  AbandonStream: MethodDefinition<WireAbandonRequest, WireAbandonReply>;
  Probe: MethodDefinition<WireProbeRequest, WireProbeReply>;
  State: MethodDefinition<WireStateRequest, WireStateReply>;
}

let loaded: protoLoader.PackageDefinition | undefined;

/** The package definition (loaded once), for `addService`, clients and reflection. */
export function swarmPackageDefinition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(SWARM_PROTO_FILE, {
    includeDirs: [PROTO_ROOT],
    keepCase: false,
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return loaded;
}

/** The typed service definition of `tailswarm.v1.Swarm`. */
export function swarmService(): SwarmServiceDefinition {
  return swarmPackageDefinition()[SWARM_SERVICE_NAME] as unknown as SwarmServiceDefinition;
}
