/**
 * The `tailswarm.v1.NodeStatus` service (proto/tailswarm/v1/node_status.proto) and the TypeScript
 * shapes of its messages as @grpc/proto-loader decodes them.
 */
import { fileURLToPath } from "node:url";
import type { ServiceDefinition } from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { PackageDefinition } from "@grpc/proto-loader";

export const NODE_STATUS_SERVICE = "tailswarm.v1.NodeStatus";
const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));

export interface WirePeerStatus {
  peerId: string;
  address: string;
  region: string;
  up: boolean;
  estimateStatus: string;
  unknownReason: string;
  p50Ms: number;
  p99Ms: number;
  samples: number;
  censored: number;
  estimateAgeMs: number;
  restarts: number;
  /** known | lower-bound | unknown. */
  p50Kind: string;
  p99Kind: string;
  /** -1 when every quantile is known. */
  horizonMs: number;
}

export interface WireStatusReply {
  nodeId: string;
  region: string;
  version: string;
  startedAtUnixMs: number;
  uptimeMs: number;
  kinds: string[];
  queueDepth: number;
  inFlight: number;
  capacity: number;
  coordinating: number;
  draining: boolean;
  policy: string;
  /** Event-loop delay over the last 5–10 s, ms (NaN before the first reading). */
  eventLoopDelayP50Ms: number;
  eventLoopDelayP99Ms: number;
  eventLoopDelayMaxMs: number;
  fanouts: number;
  decisions: { speculate: number; synchronous: number; degrade: number } | null;
  violations: number;
  abandonCostMs: number;
  peers: WirePeerStatus[];
}

let cached: PackageDefinition | undefined;

export function nodeStatusPackageDefinition(): PackageDefinition {
  cached ??= protoLoader.loadSync("tailswarm/v1/node_status.proto", {
    includeDirs: [PROTO_ROOT],
    longs: Number,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  return cached;
}

export function nodeStatusService(): ServiceDefinition {
  return nodeStatusPackageDefinition()[NODE_STATUS_SERVICE] as ServiceDefinition;
}
