/**
 * The swarm node daemon: one gRPC port serving `Swarm` (Branch, Coordinate, Abandon, Probe, State),
 * `NodeStatus`, health and reflection; handlers loaded from the config; src/mesh's Membership over
 * the static and DNS peers (node-membership.ts); a Coordinator (LatencyBook + an AbandonLedger per policy) over a
 * GrpcTransport that shares the membership's channels, every part keying peers by node id. `stop()`
 * is the graceful shutdown: health NOT_SERVING, refuse new work, drain in-flight work for
 * `drainGraceMs`, then abandon the rest and close.
 *
 * @example
 * const { config, handlersBaseDir } = await loadConfig({ argv: ["--listen", "127.0.0.1:0"] });
 * const node = await SwarmNode.start({ config, handlersBaseDir });
 * console.log(node.address);
 * await node.stop();
 */
import { combineObservers } from "../engine/combine-observers.js";
import { Coordinator } from "../engine/coordinator.js";
import { TailswarmError } from "../errors.js";
import { LatencyBook } from "../estimate/latency-book.js";
import type { FanoutObserver } from "../engine/outcome.js";
import type { PeerTransport } from "../engine/transport.js";
import { ChannelPool } from "../mesh/channel-pool.js";
import { GrpcTransport } from "../mesh/grpc-transport.js";
import { HandlerRegistry } from "../mesh/handler.js";
import type { Membership } from "../mesh/membership/membership.js";
import { createSwarmServer } from "../mesh/server.js";
import type { SwarmServer } from "../mesh/server.js";
import { loadHandler } from "../peers/load-handler.js";
import { addDecisionsService } from "../telemetry/decisions-service.js";
import type { DecisionsSource } from "../telemetry/decisions-service.js";
import type { RoutingTelemetrySource } from "../telemetry/routing-telemetry.js";
import type { SamplingHints } from "../telemetry/sampling-hints.js";
import type { NodeConfig } from "./config/types.js";
import { makeCoordinate } from "./coordinate-fn.js";
import { NodeHedging } from "./hedging.js";
import type { HedgeObserver } from "../engine/hedge-outcome.js";
import { LimitLog } from "../mesh/limit-log.js";
import { silentLogger } from "./logger.js";
import type { Logger } from "./logger.js";
import { createNodeMembership } from "./node-membership.js";
import { createNodeRouting } from "./routing-setup.js";
import type { NodeRouting } from "./routing-setup.js";
import type { StatusReply__Output } from "../mesh/gen/tailswarm/v1/StatusReply.js";
import { acquireEventLoopDelay } from "./event-loop-delay.js";
import { addStatusService, nodeStatus } from "./status-service.js";
import type { StatusRows } from "./status-service.js";
import { regionScoped } from "./region-scope.js";
import { nodeAuthorizer } from "./authorization.js";
import { createNodeHealth, healthy } from "./node-health.js";
import { healthObserver } from "../mesh/membership/health.js";
import { tlsEnabled } from "./tls.js";
import { TlsFiles } from "./tls-files.js";

/** What a telemetry setup gets to see of the node, and what it hands back. */
export interface TelemetryContext {
  readonly config: NodeConfig;
  readonly nodeId: string;
  readonly log: Logger;
  /** Current status (peers, estimates, decisions), for observable instruments. */
  readonly status: () => StatusReply__Output;
  /** The node's routing, when `routing.policy` is not none: what the routing telemetry reads. */
  readonly routing?: RoutingTelemetrySource;
}

export interface TelemetryHandle {
  /** Observes every fan-out of this node's coordinator. */
  readonly observer?: FanoutObserver;
  /** Wraps the coordinator's transport (e.g. to keep branch spans active while the mesh sends). */
  wrapTransport?(transport: PeerTransport): PeerTransport;
  /** Observes every replicated (hedged) fan-out: hedges issued, won, lost, refused, and why. */
  readonly hedgeObserver?: HedgeObserver;
  /** The flight recorder: served as tailswarm.v1.Decisions on the node's port. */
  readonly decisions?: DecisionsSource;
  /** What the tracer provider's sampler is: the server's RPC spans skip the SDK where it would not sample. */
  readonly sampling?: SamplingHints;
  /** Flushes and stops exporters; awaited during shutdown, after the server stops. */
  shutdown?(): Promise<void>;
}

/** Installs telemetry for a node (e.g. a Prometheus port and OTLP exporters). Called once at start. */
export type TelemetrySetup = (
  ctx: TelemetryContext,
) => Promise<TelemetryHandle | undefined> | TelemetryHandle | undefined;

export interface SwarmNodeOptions {
  readonly config: NodeConfig;
  /** Relative handler module paths resolve against this. Default: the working directory. */
  readonly handlersBaseDir?: string;
  readonly log?: Logger;
  /** Extra fan-out observers (flight recorder, testbed). */
  readonly observers?: readonly FanoutObserver[];
  readonly telemetry?: TelemetrySetup;
  readonly version?: string;
}

export interface StopResult {
  /** True when in-flight work finished within the grace period. */
  readonly drained: boolean;
}

export class SwarmNode {
  readonly config: NodeConfig;
  readonly nodeId: string;
  /** host:port the node listens on (the real port when the config said 0). */
  readonly address: string;
  readonly port: number;
  readonly #server: SwarmServer;
  readonly #membership: Membership;
  readonly #routing: NodeRouting;
  readonly #transport: GrpcTransport;
  readonly #pool: ChannelPool;
  readonly #telemetry: TelemetryHandle | undefined;
  readonly #status: () => StatusReply__Output;
  readonly #log: Logger;
  readonly #loop: { release(): void };
  readonly #tls: TlsFiles | undefined;
  #stopping: Promise<StopResult> | undefined;

  private constructor(parts: {
    config: NodeConfig;
    address: string;
    port: number;
    server: SwarmServer;
    membership: Membership;
    routing: NodeRouting;
    transport: GrpcTransport;
    pool: ChannelPool;
    telemetry: TelemetryHandle | undefined;
    status: () => StatusReply__Output;
    log: Logger;
    loop: { release(): void };
    tls: TlsFiles | undefined;
  }) {
    this.config = parts.config;
    this.nodeId = parts.config.nodeId;
    this.address = parts.address;
    this.port = parts.port;
    this.#server = parts.server;
    this.#membership = parts.membership;
    this.#routing = parts.routing;
    this.#transport = parts.transport;
    this.#pool = parts.pool;
    this.#telemetry = parts.telemetry;
    this.#status = parts.status;
    this.#log = parts.log;
    this.#loop = parts.loop;
    this.#tls = parts.tls;
  }

  static async start(options: SwarmNodeOptions): Promise<SwarmNode> {
    const { config } = options;
    const log = options.log ?? silentLogger;
    const nodeLog = log.child("node");
    const baseDir = options.handlersBaseDir ?? process.cwd();

    const registry = new HandlerRegistry();
    for (const [i, spec] of config.handlers.entries()) {
      const h = await loadHandler(spec, {
        nodeId: config.nodeId,
        region: config.region,
        baseDir,
        path: `handlers[${i}]`,
      });
      registry.register(h);
      nodeLog.debug("handler loaded", { kind: spec.kind, use: spec.use });
    }

    const authorize = nodeAuthorizer(config, tlsEnabled(config.tls), log.child("authz"));
    const tls = tlsEnabled(config.tls) ? TlsFiles.open(config.tls, { log: log.child("tls") }) : undefined;
    const pool = new ChannelPool({
      ...(tls !== undefined && { credentials: tls.channelCredentials() }),
      ...(config.tls.serverName !== undefined && {
        channelOptions: { "grpc.ssl_target_name_override": config.tls.serverName },
      }),
    });
    const limitLog = log.child("limits");
    const onLimit = (limit: string, fields: Record<string, unknown>): void =>
      limitLog.warn("limit reached", { limit, ...fields });
    // one rate limit per limit name, shared by the estimator, the coordinator's horizon probes and the hedging
    const engineLimits = new LimitLog(onLimit);
    // The estimator and activeSet keys are the LatencyBook's own options (their defaults and ranges are its).
    const book = new LatencyBook({
      ...config.estimator,
      maxActivePeers: config.activeSet.maxPeers,
      ...(config.activeSet.idleMs !== undefined && { activeIdleMs: config.activeSet.idleMs }),
    });
    book.onLimit = (limit, fields) => engineLimits.report(limit, fields);
    book.onLeave = (peer, cause) => {
      if (cause === "full") {
        nodeLog.warn("active set full: least recently used peer's estimates dropped", {
          peer,
          maxPeers: config.activeSet.maxPeers,
        });
      } else nodeLog.debug("peer left the active set (idle)", { peer });
    };
    const health = createNodeHealth(config.health, { book, log });
    const membership = createNodeMembership(config, { pool, book, health, log });
    const routing = createNodeRouting(config.routing, {
      pool,
      peers: () =>
        membership.live().flatMap((id) => {
          const address = membership.addressOf(id);
          return address === undefined ? [] : [{ id, address }];
        }),
    });
    const transport = new GrpcTransport({
      pool,
      addressOf: (peer) => membership.addressOf(peer),
      onLoad: routing.onLoad,
      maxAnswerDepth: config.maxJsonDepth,
    });
    // The cost is windowed like the estimates it is added to: the same window and slices (each policy
    // keeps its own ledger with these options: PolicyLedgers).
    const ledger = {
      priorMs: config.abandonCostPriorMs,
      windowMs: config.estimator.windowMs,
      slices: config.estimator.slices,
    };

    // Status reads the server and coordinator once they exist (telemetry's gauges call it later).
    const ready: { status?: (rows?: StatusRows) => StatusReply__Output } = {};
    const status = (rows?: StatusRows): StatusReply__Output => {
      if (ready.status === undefined)
        throw new TailswarmError("INTERNAL", "status: the node has not started yet");
      return ready.status(rows);
    };
    let telemetry: TelemetryHandle | undefined;
    if (options.telemetry !== undefined) {
      const adapter = routing.adapter;
      telemetry = await options.telemetry({
        config,
        nodeId: config.nodeId,
        log: log.child("telemetry"),
        status,
        ...(adapter !== undefined && {
          routing: { views: routing.views, explanation: (task, peer) => adapter.explanation(task, peer) },
        }),
      });
    }

    const observers: FanoutObserver[] = [...(options.observers ?? []), healthObserver(health, Date.now)];
    if (telemetry?.observer !== undefined) observers.push(telemetry.observer);
    const engineLog = log.child("engine");
    if (engineLog.tracing) {
      observers.push({
        onDecision: (fanoutId, c) => engineLog.debug("decision", { fanoutId, ...c }),
        onFanoutEnd: (o) =>
          engineLog.debug("fanout end", {
            fanoutId: o.fanoutId,
            mode: o.classification.mode,
            answered: o.answered,
            elapsedMs: o.elapsedMs,
            abandonCostMs: o.abandonCostMs,
          }),
      });
    }
    // Answered branches teach the routing's Learn-MABP (when it learns; otherwise the transport as is).
    const learning = routing.wrapTransport(transport);
    const fanoutTransport = telemetry?.wrapTransport?.(learning) ?? learning;
    const coordinator = new Coordinator({
      transport: fanoutTransport,
      book,
      ledger,
      horizonProbe: { ...config.horizonProbe, windowMs: config.estimator.windowMs },
      onLimit: (limit, fields) => engineLimits.report(limit, fields),
      nodeId: config.nodeId,
      observer: combineObservers(observers, onObserverError(engineLog)),
      // telemetry, the flight recorder and health hear of a fan-out after its reply is written
      deferObservers: true,
    });

    const hedging = new NodeHedging({
      config: config.hedge,
      transport: fanoutTransport,
      book,
      ledger,
      nodeId: config.nodeId,
      ...(telemetry?.hedgeObserver !== undefined && { observer: telemetry.hedgeObserver }),
      onLimit: (limit, fields) => engineLimits.report(limit, fields),
    });
    const loop = acquireEventLoopDelay();
    const server = createSwarmServer({
      nodeId: config.nodeId,
      region: config.region,
      handlers: registry,
      coordinate: makeCoordinate({
        coordinator,
        peers: healthy(regionScoped(membership, config.fanoutRegions), health),
        routing,
        policy: config.policy,
        now: () => Date.now(),
        hedging,
      }),
      ...(tls !== undefined && { credentials: tls.serverCredentials() }),
      ...(authorize !== undefined && { authorize }),
      concurrency: config.concurrency,
      maxQueue: config.queueLimit,
      coordinateAdmission: config.coordinate,
      maxPayloadBytes: config.maxPayloadBytes,
      maxJsonDepth: config.maxJsonDepth,
      maxAbandonBytes: config.maxAbandonBytes,
      connections: config.connections,
      onLimit,
      maxDeadlineMs: config.maxDeadlineMs,
      deadlineReserveMs: config.deadlineReserveMs,
      replyReserveMinMs: config.replyReserveMinMs,
      replyReserveMaxMs: config.replyReserveMaxMs,
      replyReserveMaxShare: config.replyReserveMaxShare,
      loopLateMs: () => loop.monitor.lateMs(),
      readStallMs: () => loop.monitor.readStallMs(),
      defaultBudgetMs: config.defaultBudgetMs,
      ...(telemetry?.sampling !== undefined && { sampling: telemetry.sampling }),
      ...(options.version !== undefined && { version: options.version }),
    });
    addStatusService(server.grpcServer, status);
    if (telemetry?.decisions !== undefined) addDecisionsService(server.grpcServer, telemetry.decisions);

    let bound: { port: number; address: string };
    try {
      bound = await server.listen(config.listen);
    } catch (err) {
      server.forceClose();
      loop.release();
      pool.closeAll();
      tls?.close();
      await telemetry?.shutdown?.().catch(() => undefined);
      throw err;
    }
    ready.status = (rows) =>
      nodeStatus(
        {
          config,
          server,
          coordinator,
          book,
          membership,
          health,
          listen: bound.address,
          loop: loop.monitor,
        },
        rows,
      );
    membership.start().catch((err: unknown) => nodeLog.error("membership failed", { error: err }));
    routing.start();
    nodeLog.info("listening", {
      nodeId: config.nodeId,
      region: config.region,
      address: bound.address,
      port: bound.port,
      tls: tls === undefined ? "off" : tls.material.requireClientCert ? "mutual" : "server",
      ...(config.fanoutRegions.length > 0 && { fanoutRegions: config.fanoutRegions }),
      kinds: registry.kinds(),
      routing: routing.policy,
      primitives: routing.primitivesSource,
      peers: config.peers.length,
      dns: config.dns.length,
    });
    return new SwarmNode({
      config,
      address: bound.address,
      port: bound.port,
      server,
      membership,
      routing,
      transport,
      pool,
      telemetry,
      status,
      log: nodeLog,
      loop,
      tls,
    });
  }

  status(): StatusReply__Output {
    return this.#status();
  }

  /** Graceful shutdown (idempotent): NOT_SERVING, drain for `graceMs` (default drainGraceMs), close. */
  stop(graceMs = this.config.drainGraceMs): Promise<StopResult> {
    this.#stopping ??= (async () => {
      const s = this.#server.state();
      this.#log.info("draining", {
        graceMs,
        inFlight: s.inFlight,
        queued: s.queueDepth,
        coordinating: s.coordinating,
      });
      const drained = await this.#server.close(graceMs);
      this.#release();
      await this.#telemetry
        ?.shutdown?.()
        .catch((err: unknown) => this.#log.warn("telemetry shutdown failed", { error: err }));
      this.#log.info("stopped", { drained });
      return { drained };
    })();
    return this.#stopping;
  }

  /** Immediate stop: abort all work and close every connection. */
  forceStop(): void {
    this.#server.forceClose();
    this.#release();
    this.#log.warn("forced stop");
  }

  /** What both stops release once the server is closed: routing, membership, connections, watchers. */
  #release(): void {
    this.#routing.stop();
    this.#membership.stop();
    this.#transport.close();
    this.#pool.closeAll();
    this.#loop.release();
    this.#tls?.close();
  }
}

/** Logs the first error an observer throws (later ones would repeat it on every fan-out). */
function onObserverError(log: Logger): (error: unknown) => void {
  let logged = false;
  return (error) => {
    if (logged) return;
    logged = true;
    log.warn("a fan-out observer threw; its later errors are not logged", { error });
  };
}
