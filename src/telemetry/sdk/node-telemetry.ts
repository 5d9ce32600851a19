/**
 * A swarm node's telemetry in one call: the SDK (with the node's Prometheus port, id and region), the
 * fan-out tracer, the metrics with per-peer gauges, the flight recorder, and routing's span attributes
 * and instruments when the node routes. Shaped as src/node's `TelemetrySetup` without importing it.
 */
import type { FanoutObserver } from "../../engine/outcome.js";
import type { PeerTransport } from "../../engine/transport.js";
import type { PeerEstimate, PeerId } from "../../estimate/types.js";
import { decisionsSource } from "../decisions-service.js";
import type { HedgeObserver } from "../../engine/hedge-outcome.js";
import { HedgeTelemetry } from "../hedge-metrics.js";
import type { DecisionsSource } from "../decisions-service.js";
import type { EstimateSource } from "../peer-gauges.js";
import type { RoutingTelemetrySource } from "../routing-telemetry.js";
import { createTelemetry } from "../telemetry.js";
import type { Telemetry } from "../telemetry.js";
import { ATTR_CLOUD_REGION } from "../semconv.js";
import { startTelemetry } from "./setup.js";
import type { TelemetrySdk, TelemetrySetupOptions } from "./setup.js";

/** The per-peer part of the node's status that the gauges read. */
export interface NodePeerStatus {
  readonly peerId: string;
  readonly estimateStatus: string;
  readonly unknownReason?: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly samples: number;
  readonly censored: number;
  readonly estimateAgeMs: number;
}

/** What the node shows the setup (src/node's TelemetryContext satisfies it). */
export interface NodeTelemetryContext {
  readonly config: {
    readonly listen: string;
    /** The node's region: `cloud.region` on its resource. */
    readonly region?: string;
    readonly metrics: { readonly prometheusPort: number };
    /** Absent: the AsyncLocalStorage context manager and the default sampler rate. */
    readonly telemetry?: {
      readonly contextManager: "async-hooks" | "sync";
      readonly tracesPerSecond?: number;
    };
  };
  readonly nodeId: string;
  readonly status: () => { readonly peers: readonly NodePeerStatus[] };
  readonly log?: { info(msg: string, fields?: Record<string, unknown>): void };
  /** The node's routing, when it routes: branch spans and per-peer instruments explain it. */
  readonly routing?: RoutingTelemetrySource;
}

export interface NodeTelemetryHandle {
  readonly observer: FanoutObserver;
  /** Replicated fan-outs: hedges issued, won, lost, refused, and a span with the why per decision. */
  readonly hedgeObserver: HedgeObserver;
  wrapTransport(transport: PeerTransport): PeerTransport;
  /** The flight recorder, for addDecisionsService. */
  readonly decisions: DecisionsSource;
  readonly telemetry: Telemetry;
  readonly sdk: TelemetrySdk;
  shutdown(): Promise<void>;
}

export interface NodeTelemetryOptions {
  /** Default "tailswarm-node" (OTEL_SERVICE_NAME wins). */
  readonly serviceName?: string;
  /** Decisions kept by the flight recorder. Default 256. */
  readonly recorderCapacity?: number;
  /** Span processors besides those OTEL_TRACES_EXPORTER names (an embedding application's own). */
  readonly spanProcessors?: TelemetrySetupOptions["spanProcessors"];
  /** Metric readers besides those OTEL_METRICS_EXPORTER names and Prometheus. */
  readonly metricReaders?: TelemetrySetupOptions["metricReaders"];
}

/** Reads the per-peer estimates from one status snapshot per collection. */
function statusEstimates(status: NodeTelemetryContext["status"]): EstimateSource {
  let snapshot = new Map<PeerId, NodePeerStatus>();
  return {
    peers() {
      snapshot = new Map(status().peers.map((p) => [p.peerId, p]));
      return snapshot.keys();
    },
    estimate(peer: PeerId): PeerEstimate {
      const p = snapshot.get(peer);
      return {
        peer,
        status: p?.estimateStatus === "fresh" ? "fresh" : "unknown",
        p50Ms: p?.p50Ms ?? NaN,
        p99Ms: p?.p99Ms ?? NaN,
        samples: p?.samples ?? 0,
        censored: p?.censored ?? 0,
        ageMs: p === undefined || p.estimateAgeMs < 0 ? Infinity : p.estimateAgeMs,
      };
    },
  };
}

/** Telemetry's and the flight recorder's hedge observers, in that order. */
function bothHedgeObservers(a: HedgeObserver, b: HedgeObserver): HedgeObserver {
  return {
    onHedgeDecision: (r) => {
      a.onHedgeDecision?.(r);
      b.onHedgeDecision?.(r);
    },
    onHedgedFanoutEnd: (o) => {
      a.onHedgedFanoutEnd?.(o);
      b.onHedgedFanoutEnd?.(o);
    },
    onHedgedFanoutSettled: (id, s) => {
      a.onHedgedFanoutSettled?.(id, s);
      b.onHedgedFanoutSettled?.(id, s);
    },
  };
}

/**
 * A region the node was given: the config's placeholder "default" (no `--region`) names none, and
 * `cloud.region` would then claim a region that does not exist.
 */
function hasRegion(region: string | undefined): region is string {
  return region !== undefined && region !== "" && region !== "default";
}

/** The host part of a `host:port` listen address (for the Prometheus endpoint). */
function hostOf(listen: string): string | undefined {
  const i = listen.lastIndexOf(":");
  const host = (i < 0 ? listen : listen.slice(0, i)).replace(/^\[|\]$/g, "");
  return host === "" ? undefined : host;
}

/**
 * @example
 * const node = await SwarmNode.start({ config, telemetry: nodeTelemetry() });
 */
export function nodeTelemetry(
  options: NodeTelemetryOptions = {},
): (ctx: NodeTelemetryContext) => Promise<NodeTelemetryHandle> {
  return async (ctx) => {
    const port = ctx.config.metrics.prometheusPort;
    const contextManager = ctx.config.telemetry?.contextManager ?? "async-hooks";
    const sdk = await startTelemetry({
      serviceName: options.serviceName ?? "tailswarm-node",
      serviceInstanceId: ctx.nodeId,
      resourceAttributes: {
        "tailswarm.node.id": ctx.nodeId,
        ...(hasRegion(ctx.config.region) && { [ATTR_CLOUD_REGION]: ctx.config.region }),
      },
      prometheusPort: port > 0 ? port : undefined,
      prometheusHost: port > 0 ? hostOf(ctx.config.listen) : undefined,
      contextManager,
      tracesPerSecond: ctx.config.telemetry?.tracesPerSecond,
      ...(options.spanProcessors !== undefined && { spanProcessors: options.spanProcessors }),
      ...(options.metricReaders !== undefined && { metricReaders: options.metricReaders }),
    });
    const telemetry = createTelemetry({
      estimates: statusEstimates(ctx.status),
      recorderCapacity: options.recorderCapacity ?? 256,
      sampling: sdk.sampling,
      ...(ctx.routing !== undefined && { routing: ctx.routing }),
    });
    ctx.log?.info("telemetry started", {
      traces: sdk.exporters.traces,
      metrics: sdk.exporters.metrics,
      prometheus: sdk.prometheus?.url,
      sampler: sdk.sampler,
      contextManager,
    });
    const recorder = telemetry.recorder!;
    return {
      observer: telemetry.observer,
      wrapTransport: (t) => telemetry.wrapTransport(t),
      hedgeObserver: bothHedgeObservers(new HedgeTelemetry(), recorder),
      decisions: decisionsSource(ctx.nodeId, recorder),
      sampling: sdk.sampling,
      telemetry,
      sdk,
      async shutdown() {
        telemetry.close();
        await sdk.shutdown();
      },
    };
  };
}
