/**
 * `createSwarmServer`: one gRPC server per node serving `tailswarm.v1.Swarm`, `grpc.health.v1.Health`
 * and server reflection. The node daemon builds on it: it provides the handlers, the coordinator
 * callback, credentials and the shutdown policy.
 */
import * as grpc from "@grpc/grpc-js";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { HealthImplementation } from "grpc-health-check";
import { systemClock } from "../clock/clock.js";
import type { Clock } from "../clock/clock.js";
import { clip, TailswarmError, invalid } from "../errors.js";
import { checkRange } from "../util/range.js";
import { AbandonRegistry } from "./abandon-registry.js";
import { makeBranchHandler } from "./branch-service.js";
import type { CoordinateFn } from "./coordinate.js";
import { makeCoordinateHandler } from "./coordinate-service.js";
import type { HandlerRegistry } from "./handler.js";
import type { RoutingAdvert } from "../routing/advert.js";
import type { SamplingHints } from "../telemetry/sampling-hints.js";
import { routingSourceOf, toWireRoutingState } from "./routing-state.js";
import { swarmService, SWARM_SERVICE_NAME } from "./proto.js";
import { addReflection } from "./server-definitions.js";
import type { AbandonReply } from "./gen/tailswarm/v1/AbandonReply.js";
import type { AbandonRequest__Output } from "./gen/tailswarm/v1/AbandonRequest.js";
import { limitConnections, resolveConnectionLimits } from "./connection-limits.js";
import type { ConnectionLimits } from "./connection-limits.js";
import { LimitLog } from "./limit-log.js";
import type { LimitListener } from "../engine/limit-listener.js";
import { capIncomingDeadlines, http2ServersOf } from "./http2-servers.js";
import { admitOnHeaders } from "./header-admission.js";
import type { Gate } from "./header-admission.js";
import type { AnyHttp2Server } from "./http2-servers.js";
import { callerOf } from "./authz.js";
import { GuardedServer, rpcGuard } from "./rpc-guard.js";
import type { Authorize } from "./rpc-guard.js";
import { abortReason } from "./server-core.js";
import type { NodeState, ServerCore, ServerLimits } from "./server-core.js";
import { ReplyReserve } from "./reply-reserve.js";
import { ReplyMetrics } from "../telemetry/reply-metrics.js";
import { resolveServerLimits, SERVER_DEFAULTS, SERVER_RANGES } from "./server-limits.js";
import { WorkQueue } from "./work-queue.js";
import { Admission } from "./admission.js";
import type { AdmissionLimits } from "./admission.js";

export interface SwarmServerOptions {
  readonly nodeId: string;
  readonly region?: string;
  readonly handlers: HandlerRegistry;
  /** Serves `Coordinate`; without it the node answers UNIMPLEMENTED. */
  readonly coordinate?: CoordinateFn;
  /** Extra or overriding fields for `State` (e.g. a region learned later). */
  readonly state?: () => Partial<Pick<NodeState, "region" | "version">>;
  /**
   * Routing state for `State` and every Branch reply (memory-augmented backpressure). Default: the
   * first handler with a `routingState()` method (the `context` worker); none: not advertised.
   */
  readonly routingState?: () => RoutingAdvert | undefined;
  /** Default: insecure. */
  readonly credentials?: grpc.ServerCredentials;
  /** Decides per call from the caller's certificate (`makeAuthorizer`, ./authz.ts); default: all allowed. */
  readonly authorize?: Authorize;
  readonly clock?: Clock;
  /*
   * Limits: each default and range is in SERVER_DEFAULTS / SERVER_RANGES (./server-limits.ts); a value
   * outside its range is INVALID_CONFIG.
   */
  /** Branches running at once. */
  readonly concurrency?: number;
  /** Branches waiting beyond that; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxQueue?: number;
  /** Payloads above it get INVALID_ARGUMENT; messages above 2× it are refused by gRPC. */
  readonly maxPayloadBytes?: number;
  /** Deepest nesting of arrays and objects in a JSON payload or options; deeper is INVALID_ARGUMENT. */
  readonly maxJsonDepth?: number;
  /** Longest deadline honoured, ms; a later one (gRPC timeout, deadline_unix_ms, budget_ms) is cut to it. */
  readonly maxDeadlineMs?: number;
  /** Kept back from an incoming deadline to reply in time, ms. */
  readonly deadlineReserveMs?: number;
  /**
   * Bounds of a Coordinate's reserve, which follows its measured decide-and-reply overhead p99 and
   * `loopLateMs`, ms.
   */
  readonly replyReserveMinMs?: number;
  readonly replyReserveMaxMs?: number;
  readonly replyReserveMaxShare?: number;
  /**
   * How late the process's event loop runs a callback now, ms (a node gives its `EventLoopDelay`'s
   * `lateMs`): a Coordinate's reply reserve keeps it for the lateness its header read met. Absent: 0.
   */
  readonly loopLateMs?: () => number;
  /**
   * How long a request read now may have waited unread, ms (a node gives its `EventLoopDelay`'s
   * `readStallMs`): a Coordinate's gRPC timeout is cut by it on its headers. Absent: 0.
   */
  readonly readStallMs?: () => number;
  /** After an abort, how long to wait for the handler to stop before replying anyway, ms. */
  readonly abandonReplyGraceMs?: number;
  /**
   * A branch's absolute deadline (`deadline_unix_ms`, the caller's clock) is used when it is within
   * this of its gRPC deadline — clocks agree, and it removes the transit time by which a relative
   * gRPC timeout stretches; otherwise the gRPC deadline alone counts. 0 trusts only the gRPC deadline.
   */
  readonly callerClockToleranceMs?: number;
  /** Budget for calls without a deadline, ms. */
  readonly defaultBudgetMs?: number;
  readonly version?: string;
  /** Bytes held by ids abandoned before their Branch arrived (count and age bound them too). */
  readonly maxAbandonBytes?: number;
  /** Per-client bounds on connections (defaults and ranges: CONNECTION_DEFAULTS / CONNECTION_RANGES). */
  readonly connections?: Partial<ConnectionLimits>;
  /** Admission of Coordinate (defaults and ranges: ADMISSION_DEFAULTS / ADMISSION_RANGES). */
  readonly coordinateAdmission?: Partial<AdmissionLimits>;
  /** Told (at most once a second per limit, with a count of the rest) when a limit refuses something. */
  readonly onLimit?: LimitListener;
  /** Extra grpc-js server options. */
  readonly grpcOptions?: grpc.ServerOptions;
  /**
   * What the tracer provider's sampler is (a node's SDK set-up gives `sdk.sampling`): a call's server
   * span is not started through the SDK where the sampler would not sample it (an unsampled caller
   * under a parent-based sampler; no caller context, when the sampler declines a new trace). Without it
   * every call asks the SDK.
   */
  readonly sampling?: SamplingHints;
}

export interface SwarmServer {
  readonly nodeId: string;
  readonly startedAt: number;
  /** The underlying grpc-js server (to add services). */
  readonly grpcServer: grpc.Server;
  readonly health: HealthImplementation;
  /** Binds and starts serving; `address` defaults to 127.0.0.1:0. Resolves to the bound port. */
  listen(address?: string): Promise<{ port: number; address: string }>;
  state(): NodeState;
  /** Sets the health status of "" and the Swarm service. */
  setServing(serving: boolean): void;
  /**
   * Graceful stop: health NOT_SERVING, new branches refused, in-flight work drains for up to
   * `graceMs`, then the rest is abandoned (handlers' signals abort) and the server is forced down.
   * Resolves to true when everything drained within the grace (false when a `forceClose()` cut it short).
   */
  close(graceMs?: number): Promise<boolean>;
  /** Immediate stop: abort all work and close every connection. */
  forceClose(): void;
}

const HEALTH_SERVICES = ["", SWARM_SERVICE_NAME];

/**
 * @example
 * const server = createSwarmServer({ nodeId: "n1", region: "eu", handlers: new HandlerRegistry([echo]) });
 * const { port } = await server.listen("127.0.0.1:0");
 * // … later
 * await server.close(5_000);
 */
export function createSwarmServer(options: SwarmServerOptions): SwarmServer {
  if (typeof options.nodeId !== "string" || options.nodeId === "") {
    throw invalid("nodeId", options.nodeId, "a non-empty string", { code: "INVALID_CONFIG" });
  }
  const clock = options.clock ?? systemClock;
  const limitLog = new LimitLog(options.onLimit);
  const limits: ServerLimits = resolveServerLimits(options);
  const { maxPayloadBytes } = limits;
  const queue = new WorkQueue(
    checkRange("concurrency", options.concurrency ?? SERVER_DEFAULTS.concurrency, SERVER_RANGES.concurrency),
    checkRange("maxQueue", options.maxQueue ?? SERVER_DEFAULTS.maxQueue, SERVER_RANGES.maxQueue),
  );
  const abandons = new AbandonRegistry({
    maxTombstoneBytes: checkRange(
      "maxAbandonBytes",
      options.maxAbandonBytes ?? SERVER_DEFAULTS.maxAbandonBytes,
      SERVER_RANGES.maxAbandonBytes,
    ),
    onEvict: (dropped) => limitLog.report("maxAbandonBytes", { dropped }),
  });
  const startedAt = Date.now();
  const version = options.version ?? "";
  const routingSource = options.routingState ?? routingSourceOf(options.handlers);
  const routing = (): ReturnType<typeof toWireRoutingState> | undefined => {
    const advert = routingSource?.();
    return advert === undefined ? undefined : toWireRoutingState(advert);
  };
  // Health reads NOT_SERVING while Coordinate sheds load (and while draining); SERVING again after.
  let shedding = false;
  const coordinateAdmission = new Admission({
    what: "coordinate",
    limits: options.coordinateAdmission ?? {},
    clock,
    log: limitLog,
    onShedding: (on) => {
      shedding = on;
      if (!core.draining) setServing(!on);
    },
  });
  const core: ServerCore = {
    nodeId: options.nodeId,
    clock,
    handlers: options.handlers,
    queue,
    coordinateAdmission,
    abandons,
    limits,
    replyReserve: new ReplyReserve({
      transitMs: limits.deadlineReserveMs,
      minMs: limits.replyReserveMinMs,
      maxMs: limits.replyReserveMaxMs,
      maxShare: limits.replyReserveMaxShare,
      ...(options.loopLateMs !== undefined && { loopLateMs: options.loopLateMs }),
      onCapped: (wantedMs, capMs, parts, bound) =>
        limitLog.report(bound === "maxShare" ? "replyReserveMaxShare" : "replyReserveMaxMs", {
          wantedMs,
          capMs,
          ...parts,
          maxMs: limits.replyReserveMaxMs,
          maxShare: limits.replyReserveMaxShare,
        }),
    }),
    replyMetrics: new ReplyMetrics(),
    sampling: options.sampling,
    draining: false,
    coordinating: 0,
    load: () => ({
      queueDepth: queue.queueDepth,
      inFlight: queue.inFlight,
      capacity: queue.capacity,
      routing: routing(),
    }),
  };

  const connectionLimits = resolveConnectionLimits(options.connections ?? {});
  const stopLimits: (() => void)[] = [];
  const server = new GuardedServer({
    "grpc.max_receive_message_length": 2 * maxPayloadBytes + 64 * 1024,
    "grpc.max_concurrent_streams": connectionLimits.maxConcurrentStreams,
    "grpc.keepalive_time_ms": connectionLimits.keepaliveTimeMs,
    "grpc.keepalive_timeout_ms": connectionLimits.keepaliveTimeoutMs,
    ...options.grpcOptions,
    interceptors: [rpcGuard({ authorize: options.authorize }), ...(options.grpcOptions?.interceptors ?? [])],
  });
  // Calls refused on their HTTP/2 headers, before grpc-js sees them (./header-admission.ts).
  const gates: Gate[] =
    options.coordinate === undefined
      ? []
      : [
          {
            path: swarmService().Coordinate.path,
            admission: coordinateAdmission,
            open: () => !core.draining,
          },
        ];
  const abandonStreams = new Set<ServerDuplexStream<AbandonRequest__Output, AbandonReply>>();
  /** Abandons `issuer`'s branches among `ids` (another caller's are not matched). */
  const abandonIds = (ids: readonly string[], issuer: string): number => {
    let matched = 0;
    const now = clock.now();
    for (const id of ids) {
      if (abandons.abandon(id, abortReason("abandoned", `branch ${clip(id)}`), now, issuer)) matched++;
    }
    return matched;
  };

  const state = (): NodeState => ({
    nodeId: options.nodeId,
    region: options.region ?? "",
    queueDepth: queue.queueDepth,
    inFlight: queue.inFlight,
    capacity: queue.capacity,
    startedAt,
    kinds: options.handlers.kinds(),
    coordinating: core.coordinating,
    version,
    draining: core.draining,
    ...options.state?.(),
  });

  server.addService(swarmService(), {
    Branch: makeBranchHandler(core),
    Coordinate: makeCoordinateHandler(core, options.coordinate),
    Abandon: (
      call: grpc.ServerUnaryCall<AbandonRequest__Output, AbandonReply>,
      cb: grpc.sendUnaryData<AbandonReply>,
    ) => {
      cb(null, { matched: abandonIds(call.request.branchIds ?? [], callerOf(call)) });
    },
    AbandonStream: (call: ServerDuplexStream<AbandonRequest__Output, AbandonReply>) => {
      abandonStreams.add(call);
      const forget = (): void => void abandonStreams.delete(call);
      call.on("data", (req: AbandonRequest__Output) => {
        const matched = abandonIds(req.branchIds ?? [], callerOf(call));
        if (!call.cancelled) call.write({ matched });
      });
      call.on("end", () => {
        forget();
        call.end();
      });
      call.on("cancelled", forget);
      call.on("error", forget);
    },
    Probe: (call: grpc.ServerUnaryCall<{ sentUnixMs: number }, unknown>, cb: grpc.sendUnaryData<unknown>) => {
      // A draining node takes no new branches: peers that probe it count it as gone, not up.
      if (core.draining) return cb({ code: grpc.status.UNAVAILABLE, details: "draining" });
      cb(null, {
        sentUnixMs: call.request.sentUnixMs,
        nodeId: options.nodeId,
        startedAtUnixMs: startedAt,
        serverUnixMs: Date.now(),
      });
    },
    State: (_call: unknown, cb: grpc.sendUnaryData<unknown>) => {
      const s = state();
      cb(null, {
        nodeId: s.nodeId,
        region: s.region,
        queueDepth: s.queueDepth,
        inFlight: s.inFlight,
        capacity: s.capacity,
        startedAtUnixMs: s.startedAt,
        kinds: [...s.kinds],
        coordinating: s.coordinating,
        version: s.version,
        routing: routing(),
      });
    },
  });

  const health = new HealthImplementation(Object.fromEntries(HEALTH_SERVICES.map((s) => [s, "SERVING"])));
  health.addToServer(server);
  addReflection(server);

  function setServing(serving: boolean): void {
    for (const s of HEALTH_SERVICES) health.setStatus(s, serving && !shedding ? "SERVING" : "NOT_SERVING");
  }
  /** HTTP/2 servers already given the deadline cap (one per bound address). */
  const guarded = new WeakSet<AnyHttp2Server>();
  /** Set by forceClose(): a close() still draining stops waiting and reports not drained. */
  let forced = false;
  const forceClose = (): void => {
    forced = true;
    core.draining = true;
    coordinateAdmission.close();
    setServing(false);
    abandons.abandonAll(abortReason("shutdown", `node ${options.nodeId}`));
    for (const s of abandonStreams) s.end();
    abandonStreams.clear();
    for (const stop of stopLimits.splice(0)) stop();
    server.forceShutdown();
  };

  return {
    nodeId: options.nodeId,
    startedAt,
    grpcServer: server,
    health,
    state,
    setServing,
    forceClose,
    listen(address = "127.0.0.1:0") {
      return new Promise((resolve, reject) => {
        server.bindAsync(
          address,
          options.credentials ?? grpc.ServerCredentials.createInsecure(),
          (error, port) => {
            if (error) {
              reject(
                new TailswarmError("INVALID_CONFIG", `listen: cannot bind ${address} (${error.message})`, {
                  cause: error,
                }),
              );
              return;
            }
            for (const h2 of http2ServersOf(server)) {
              if (guarded.has(h2)) continue;
              guarded.add(h2);
              // first the gate (it moves grpc-js's listener behind it), then the cap, which runs before both
              admitOnHeaders(h2, gates, {
                ...(options.authorize !== undefined && { authorize: options.authorize }),
                ...(options.readStallMs !== undefined && { readStallMs: options.readStallMs }),
              });
              capIncomingDeadlines(h2, limits.maxDeadlineMs);
              stopLimits.push(limitConnections(h2, connectionLimits, limitLog));
            }
            const host = address.slice(0, address.lastIndexOf(":"));
            resolve({ port, address: `${host}:${port}` });
          },
        );
      });
    },
    async close(graceMs = SERVER_DEFAULTS.drainGraceMs) {
      core.draining = true;
      setServing(false);
      const until = clock.now() + graceMs;
      const busy = (): boolean => queue.inFlight + queue.queueDepth + core.coordinating > 0;
      while (busy() && !forced && clock.now() < until) {
        await new Promise<void>((r) => clock.setTimer(r, 10));
      }
      // A forceClose() meanwhile aborted the rest and closed everything: that is not a drain.
      if (forced) return false;
      const drained = !busy();
      if (!drained) {
        // Stop the rest: their calls complete normally (ABANDONED) within the reply grace.
        abandons.abandonAll(abortReason("shutdown", `node ${options.nodeId}`));
        await new Promise<void>((r) => clock.setTimer(r, limits.abandonReplyGraceMs + 10));
      }
      for (const s of abandonStreams) s.end();
      abandonStreams.clear();
      coordinateAdmission.close();
      await new Promise<void>((resolve) => {
        const t = clock.setTimer(
          () => {
            forceClose();
            resolve();
          },
          Math.max(100, until - clock.now()),
        );
        server.tryShutdown(() => {
          for (const stop of stopLimits.splice(0)) stop();
          t.cancel();
          resolve();
        });
      });
      return drained;
    },
  };
}
