/** State shared by the services of one swarm server: identity, clock, queue, abandon registry. */
import type { ReplyReserve } from "./reply-reserve.js";
import type { ReplyMetrics } from "../telemetry/reply-metrics.js";
import type { Clock } from "../clock/clock.js";
import { TailswarmError } from "../errors.js";
import type { SamplingHints } from "../telemetry/sampling-hints.js";
import type { HandlerRegistry } from "./handler.js";
import type { AbandonRegistry } from "./abandon-registry.js";
import type { WorkQueue } from "./work-queue.js";
import type { Admission } from "./admission.js";
import type { PeerLoad } from "./gen/tailswarm/v1/PeerLoad.js";

/** What a node reports about itself in `State` (and partly on every Branch reply). */
export interface NodeState {
  readonly nodeId: string;
  readonly region: string;
  readonly queueDepth: number;
  readonly inFlight: number;
  readonly capacity: number;
  /** Epoch ms when the server was created: a new value means the node restarted. */
  readonly startedAt: number;
  readonly kinds: readonly string[];
  /** Coordinate calls running. */
  readonly coordinating: number;
  readonly version: string;
  readonly draining: boolean;
}

export interface ServerLimits {
  /** Largest payload (JSON bytes) accepted, bytes. */
  readonly maxPayloadBytes: number;
  /**
   * Time a node keeps from an incoming deadline to send its reply, ms: a Branch's reserve, and the
   * transit part of a Coordinate's, kept on top of its measured overhead p99 (`ReplyReserve`).
   */
  readonly deadlineReserveMs: number;
  /** Bounds of a Coordinate's whole reserve, transit plus measured overhead (`ReplyReserve`), ms. */
  readonly replyReserveMinMs: number;
  readonly replyReserveMaxMs: number;
  /** A Coordinate's reserve takes at most this share of the call's time left on arrival, in [0, 1]. */
  readonly replyReserveMaxShare: number;
  /** After an abort, how long to wait for the handler to stop before replying anyway, ms. */
  readonly abandonReplyGraceMs: number;
  /** A caller's absolute deadline is trusted when within this of its gRPC deadline, ms. */
  readonly callerClockToleranceMs: number;
  /** Budget for calls that carry no deadline at all, ms. */
  readonly defaultBudgetMs: number;
  /** Deepest nesting of arrays and objects accepted in a JSON payload or options. */
  readonly maxJsonDepth: number;
  /** Longest deadline honoured, ms: a later one (gRPC timeout, deadline_unix_ms, budget_ms) is cut to it. */
  readonly maxDeadlineMs: number;
}

export interface ServerCore {
  readonly nodeId: string;
  readonly clock: Clock;
  readonly handlers: HandlerRegistry;
  readonly queue: WorkQueue;
  /** Admission of Coordinate calls (they fan out): its own limit and queue, apart from Branch's. */
  readonly coordinateAdmission: Admission;
  readonly abandons: AbandonRegistry;
  readonly limits: ServerLimits;
  /** The reserve a Coordinate keeps from its caller's deadline (measured decide-and-reply overhead). */
  readonly replyReserve: ReplyReserve;
  readonly replyMetrics: ReplyMetrics;
  /** The sampler's hints for the server's RPC spans (SwarmServerOptions.sampling). */
  readonly sampling: SamplingHints | undefined;
  draining: boolean;
  coordinating: number;
  load(): PeerLoad;
}

/** Why a branch's work stopped; handlers see it as `signal.reason` (a TailswarmError). */
export type AbortCause = "abandoned" | "deadline" | "cancelled" | "shutdown";

/** The `signal.reason` for a stop: code DEADLINE_EXCEEDED for the deadline, ABORTED otherwise. */
export function abortReason(cause: AbortCause, what: string): TailswarmError {
  return cause === "deadline"
    ? new TailswarmError("DEADLINE_EXCEEDED", `${what}: deadline passed`)
    : new TailswarmError("ABORTED", `${what}: ${cause}`);
}
