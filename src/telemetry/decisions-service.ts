/**
 * The flight recorder over gRPC: `tailswarm.v1.Decisions/Recent` (proto/tailswarm/v1/decisions.proto).
 * The node adds the service to its server with one call; `tailswarm decisions` is the client.
 */
import * as grpc from "@grpc/grpc-js";
import type { ChannelCredentials, ChannelOptions, ServiceDefinition } from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import type { Decision__Output } from "../mesh/gen/tailswarm/v1/Decision.js";
import type { DecisionsClient, DecisionsHandlers } from "../mesh/gen/tailswarm/v1/Decisions.js";
import { LOADER_OPTIONS } from "../mesh/proto.js";
import type { EstimateKind } from "../policy/shown-kinds.js";
import type { DecisionRecord } from "./flight-recorder.js";

export const DECISIONS_SERVICE_NAME = "tailswarm.v1.Decisions";

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
    const pkg = protoLoader.loadSync("tailswarm/v1/decisions.proto", LOADER_OPTIONS);
    loaded = pkg[DECISIONS_SERVICE_NAME] as ServiceDefinition;
  }
  return loaded;
}

const opt = (v: number | null): number | undefined => (v === null ? undefined : v);
const back = (v: number | undefined | null): number | null => (typeof v === "number" ? v : null);

function toWire(r: DecisionRecord): Decision__Output {
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
    policy: r.policy,
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
    hedges: [...(r.hedges ?? [])],
  };
}

function fromWire(w: Decision__Output): DecisionRecord {
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
    policy: w.policy ?? "",
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
    ...((w.hedges ?? []).length > 0 && { hedges: w.hedges }),
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
  const impl: DecisionsHandlers = {
    Recent(call, callback) {
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
  ) as unknown as DecisionsClient;
  const deadline = Date.now() + (options.deadlineMs ?? 5_000);
  return new Promise<RecentDecisions>((resolve, reject) => {
    client.Recent({ last: options.last ?? 0 }, new grpc.Metadata(), { deadline }, (err, reply) => {
      client.close();
      if (err !== null || reply === undefined) {
        reject(err ?? new Error("empty reply"));
        return;
      }
      resolve({
        nodeId: reply.nodeId,
        capacity: reply.capacity,
        recorded: reply.recorded,
        decisions: reply.decisions.map(fromWire),
      });
    });
  });
}
