/**
 * The flight recorder over gRPC: `tailswarm.v1.Decisions/Recent` (proto/tailswarm/v1/decisions.proto).
 * The node adds the service to its server with one call; `tailswarm decisions` is the client.
 */
import { fileURLToPath } from "node:url";
import * as grpc from "@grpc/grpc-js";
import type {
  ChannelCredentials,
  ChannelOptions,
  ServiceDefinition,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { BranchOutcome } from "../engine/outcome.js";
import type { DecisionRecord, EstimateKind } from "./flight-recorder.js";

const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));
export const DECISIONS_SERVICE_NAME = "tailswarm.v1.Decisions";

interface WireDecision {
  fanoutId: string;
  atUnixMs: number;
  mode: string;
  reason: string;
  because: string;
  budgetMs?: number;
  fanoutP50Ms?: number;
  fanoutP99Ms?: number;
  abandonCostMs?: number;
  decisionRelevant: boolean;
  size: number;
  requirement: string;
  estimateStatus: string;
  unknownPeers: string[];
  estimateAgeMs?: number;
  minSamples: number;
  branches: Record<BranchOutcome, number> | null;
  answered: number;
  lostWorkMs: number;
  decisionChanged: boolean;
  degraded: boolean;
  deadlineMissed: boolean;
  elapsedMs: number;
  infoGainPerCommitted?: number;
  violationCode: string;
  violationMessage: string;
  traceId: string;
  estimateBasis: string;
  p50Kind: string;
  p99Kind: string;
  horizonMs?: number;
}

interface WireReply {
  nodeId: string;
  capacity: number;
  recorded: number;
  decisions: WireDecision[];
}

/** What the node gives the service. */
export interface DecisionsSource {
  readonly nodeId: string;
  readonly capacity: number;
  readonly recorded: number;
  last(n?: number): DecisionRecord[];
}

export interface RecentDecisions {
  readonly nodeId: string;
  readonly capacity: number;
  readonly recorded: number;
  /** Newest first. */
  readonly decisions: DecisionRecord[];
}

let loaded: ServiceDefinition | undefined;

/** The service definition of `tailswarm.v1.Decisions` (loaded once). */
export function decisionsServiceDefinition(): ServiceDefinition {
  if (loaded === undefined) {
    const pkg = protoLoader.loadSync("tailswarm/v1/decisions.proto", {
      includeDirs: [PROTO_ROOT],
      keepCase: false,
      longs: Number,
      enums: String,
      defaults: true,
      oneofs: true,
    });
    loaded = pkg[DECISIONS_SERVICE_NAME] as ServiceDefinition;
  }
  return loaded;
}

const opt = (v: number | null): number | undefined => (v === null ? undefined : v);
const back = (v: number | undefined | null): number | null => (typeof v === "number" ? v : null);

function toWire(r: DecisionRecord): WireDecision {
  return {
    fanoutId: r.fanoutId,
    atUnixMs: r.atUnixMs,
    mode: r.mode,
    reason: r.reason,
    because: r.because,
    budgetMs: opt(r.budgetMs),
    fanoutP50Ms: opt(r.fanoutP50Ms),
    fanoutP99Ms: opt(r.fanoutP99Ms),
    abandonCostMs: opt(r.abandonCostMs),
    decisionRelevant: r.decisionRelevant,
    size: r.size,
    requirement: r.requirement,
    estimateStatus: r.estimateStatus,
    unknownPeers: [...r.unknownPeers],
    estimateAgeMs: opt(r.estimateAgeMs),
    minSamples: r.minSamples,
    branches: { ...r.branches },
    answered: r.answered,
    lostWorkMs: r.lostWorkMs,
    decisionChanged: r.decisionChanged,
    degraded: r.degraded,
    deadlineMissed: r.deadlineMissed,
    elapsedMs: r.elapsedMs,
    infoGainPerCommitted: opt(r.infoGainPerCommitted),
    violationCode: r.violation?.code ?? "",
    violationMessage: r.violation?.message ?? "",
    traceId: r.traceId ?? "",
    estimateBasis: r.estimateBasis,
    p50Kind: r.p50Kind,
    p99Kind: r.p99Kind,
    horizonMs: opt(r.horizonMs),
  };
}

function fromWire(w: WireDecision): DecisionRecord {
  const b = w.branches ?? { committed: 0, partial: 0, abandoned: 0, late: 0, failed: 0 };
  return {
    fanoutId: w.fanoutId,
    atUnixMs: w.atUnixMs,
    mode: w.mode,
    reason: w.reason,
    because: w.because ?? "",
    budgetMs: back(w.budgetMs),
    fanoutP50Ms: back(w.fanoutP50Ms),
    fanoutP99Ms: back(w.fanoutP99Ms),
    abandonCostMs: back(w.abandonCostMs),
    decisionRelevant: w.decisionRelevant,
    size: w.size,
    requirement: w.requirement,
    estimateStatus: w.estimateStatus === "fresh" ? "fresh" : "unknown",
    unknownPeers: w.unknownPeers ?? [],
    estimateAgeMs: back(w.estimateAgeMs),
    minSamples: w.minSamples,
    branches: {
      committed: b.committed ?? 0,
      partial: b.partial ?? 0,
      abandoned: b.abandoned ?? 0,
      late: b.late ?? 0,
      failed: b.failed ?? 0,
    },
    answered: w.answered,
    lostWorkMs: w.lostWorkMs,
    decisionChanged: w.decisionChanged,
    degraded: w.degraded,
    deadlineMissed: w.deadlineMissed,
    elapsedMs: w.elapsedMs,
    infoGainPerCommitted: back(w.infoGainPerCommitted),
    violation: w.violationCode === "" ? null : { code: w.violationCode, message: w.violationMessage },
    traceId: w.traceId === "" ? null : w.traceId,
    estimateBasis: w.estimateBasis === "observed" ? "observed" : "independent",
    p50Kind: kindOf(w.p50Kind),
    p99Kind: kindOf(w.p99Kind),
    horizonMs: back(w.horizonMs),
  };
}

/** A kind from the wire; anything else (an older node sends none) reads as unknown. */
function kindOf(k: string | undefined): EstimateKind {
  return k === "known" || k === "lower-bound" ? k : "unknown";
}

/**
 * Serves the flight recorder on `server`.
 *
 * @example
 * addDecisionsService(server, { nodeId, get capacity() { return recorder.capacity },
 *   get recorded() { return recorder.recorded }, last: (n) => recorder.last(n) });
 * // or simply: addDecisionsService(server, decisionsSource(nodeId, recorder))
 */
export function addDecisionsService(server: grpc.Server, source: DecisionsSource): void {
  const impl: UntypedServiceImplementation = {
    Recent(call: grpc.ServerUnaryCall<{ last: number }, WireReply>, callback: grpc.sendUnaryData<WireReply>) {
      const n = call.request.last > 0 ? call.request.last : source.capacity;
      callback(null, {
        nodeId: source.nodeId,
        capacity: source.capacity,
        recorded: source.recorded,
        decisions: source.last(n).map(toWire),
      });
    },
  };
  server.addService(decisionsServiceDefinition(), impl);
}

/** A `DecisionsSource` over a FlightRecorder. */
export function decisionsSource(
  nodeId: string,
  recorder: { readonly capacity: number; readonly recorded: number; last(n?: number): DecisionRecord[] },
): DecisionsSource {
  return {
    nodeId,
    get capacity() {
      return recorder.capacity;
    },
    get recorded() {
      return recorder.recorded;
    },
    last: (n) => recorder.last(n),
  };
}

/** Asks the node at `address` (host:port) for its recent decisions. */
export function fetchDecisions(
  address: string,
  options: {
    last?: number;
    deadlineMs?: number;
    credentials?: ChannelCredentials;
    /** E.g. `grpc.ssl_target_name_override` for a node dialed by IP. */
    channelOptions?: ChannelOptions;
  } = {},
): Promise<RecentDecisions> {
  const Client = grpc.makeGenericClientConstructor(decisionsServiceDefinition(), "Decisions");
  const client = new Client(
    address,
    options.credentials ?? grpc.credentials.createInsecure(),
    options.channelOptions ?? {},
  );
  const deadline = Date.now() + (options.deadlineMs ?? 5_000);
  return new Promise<RecentDecisions>((resolve, reject) => {
    const recent = (client as unknown as Record<string, unknown>)["Recent"] as (
      req: { last: number },
      md: grpc.Metadata,
      opts: grpc.CallOptions,
      cb: (err: grpc.ServiceError | null, reply?: WireReply) => void,
    ) => void;
    recent.call(client, { last: options.last ?? 0 }, new grpc.Metadata(), { deadline }, (err, reply) => {
      client.close();
      if (err !== null || reply === undefined) {
        reject(err ?? new Error("empty reply"));
        return;
      }
      resolve({
        nodeId: reply.nodeId,
        capacity: reply.capacity,
        recorded: reply.recorded,
        decisions: (reply.decisions ?? []).map(fromWire),
      });
    });
  });
}
