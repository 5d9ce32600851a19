/**
 * `GrpcTransport`: the engine's `PeerTransport` over gRPC. One channel per peer address (shared
 * through a `ChannelPool`), never rejects, and abandons without cancelling calls:
 *
 * - the gRPC deadline is the logical deadline plus `deadlineGraceMs`, and the peer stops its work at
 *   the logical deadline and replies EXPIRED itself, so the client-side deadline (an RST_STREAM)
 *   does not fire in normal operation;
 * - when the caller's signal aborts, the branch id goes to the peer on the per-peer Abandon stream;
 *   the peer aborts the handler and the pending call completes normally with ABANDONED and the work
 *   the peer really lost;
 * - only if no reply arrives within `abandonGraceMs` does the transport settle on its own estimate,
 *   and it hard-cancels the call only while a per-peer RST budget lasts.
 *
 * Sending: the task's payload is encoded once per fan-out; the calls themselves start right after the
 * fan-out's synchronous loop, at most `sendBatch` per turn of the event loop, so a fan-out to hundreds
 * of peers lets replies and other calls through between batches instead of holding the loop for the
 * whole send. `sendStats` counts the branches sent, the batches and the CPU the sends took.
 */
import { status as Status } from "@grpc/grpc-js";
import type { Client, ClientUnaryCall, Deadline, Metadata, ServiceError } from "@grpc/grpc-js";
import { systemClock } from "../clock/clock.js";
import type { Clock, TimerHandle } from "../clock/clock.js";
import type { PeerId } from "../estimate/types.js";
import type {
  BranchCallOptions,
  BranchRequest,
  BranchResult,
  PeerTransport,
  Task,
} from "../engine/transport.js";
import { clip } from "../errors.js";
import { Abandoner } from "./abandoner.js";
import { ChannelPool } from "./channel-pool.js";
import { decodeJson, encodeJson } from "./codec.js";
import { grpcDeadlineFor } from "./deadline.js";
import { swarmService } from "./proto.js";
import type { BranchReply__Output } from "./gen/tailswarm/v1/BranchReply.js";
import type { BranchRequest as BranchRequestMessage } from "./gen/tailswarm/v1/BranchRequest.js";
import type { PeerLoad__Output } from "./gen/tailswarm/v1/PeerLoad.js";
import { RstBudget } from "./rst-budget.js";
import { SERVER_DEFAULTS } from "./server-limits.js";
import { grpcStatusName } from "./status.js";
import { traceMetadata } from "./trace.js";
import { checkRange, intRange } from "../util/range.js";

export interface GrpcTransportOptions {
  /** Channels to share (with membership). Default: a private pool. */
  readonly pool?: ChannelPool;
  /** Address of a peer id; default: the id is the address. `undefined` fails the branch. */
  readonly addressOf?: (peer: PeerId) => string | undefined;
  readonly clock?: Clock;
  /** The gRPC deadline exceeds the logical deadline by this, ms. Default 200. */
  readonly deadlineGraceMs?: number;
  /**
   * After an abandon, wait this long for the peer's ABANDONED reply before settling on an estimate
   * (and hard-cancelling while the RST budget lasts), ms. Default 2 000: a last resort for a hung
   * peer or a lost abandon, not the normal path.
   */
  readonly abandonGraceMs?: number;
  /** Last-resort RST_STREAMs per peer: burst and refill per second. Default 50 and 10/s. */
  readonly hardCancelBurst?: number;
  readonly hardCancelPerSecond?: number;
  /** Largest answer accepted, bytes. Default 4 MiB. */
  readonly maxAnswerBytes?: number;
  /** Deepest nesting of arrays and objects accepted in an answer. Default: the server's `maxJsonDepth`. */
  readonly maxAnswerDepth?: number;
  /** Load a peer piggybacked on its reply (queue depth, in-flight, capacity). */
  readonly onLoad?: (peer: PeerId, load: PeerLoad__Output) => void;
  /** Branch calls started per turn of the event loop, at most. Default 64. */
  readonly sendBatch?: number;
}

/** What the transport's sends have cost since it was made. */
export interface SendStats {
  /** Branch calls started. */
  readonly branches: number;
  /** Turns of the event loop they were started in. */
  readonly batches: number;
  /** Thread CPU the starts took (serialising the request, grpc-js call setup), µs. */
  readonly cpuMicros: number;
}

interface PeerLink {
  readonly client: Client;
  readonly abandoner: Abandoner;
  readonly rst: RstBudget;
}

export class GrpcTransport implements PeerTransport {
  readonly #pool: ChannelPool;
  readonly #ownsPool: boolean;
  readonly #addressOf: (peer: PeerId) => string | undefined;
  readonly #clock: Clock;
  readonly #grace: number;
  readonly #abandonGrace: number;
  readonly #burst: number;
  readonly #perSecond: number;
  readonly #maxAnswer: number;
  readonly #maxAnswerDepth: number;
  readonly #onLoad: ((peer: PeerId, load: PeerLoad__Output) => void) | undefined;
  readonly #links = new Map<string, PeerLink>();
  /** Branches waiting on each fan-out signal (see #waitForAbort). */
  readonly #waiters = new WeakMap<AbortSignal, Set<PendingBranch>>();
  /** Branches not yet filed under their signal's abort listener (see #arm). */
  #unarmed: PendingBranch[] = [];
  readonly #method = swarmService().Branch;
  #lastTask: Task | undefined;
  #lastPayload: Buffer | undefined;
  readonly #sendBatch: number;
  /** Branches waiting for their call to start (see #flush). */
  #toSend: PendingBranch[] = [];
  #sendScheduled = false;
  #sent = 0;
  #batches = 0;
  #sendCpuMicros = 0;
  /** Hard cancels sent (RST_STREAM), for tests and stats. */
  hardCancels = 0;

  constructor(options: GrpcTransportOptions = {}) {
    this.#pool = options.pool ?? new ChannelPool();
    this.#ownsPool = options.pool === undefined;
    this.#addressOf = options.addressOf ?? ((p) => p);
    this.#clock = options.clock ?? systemClock;
    this.#grace = options.deadlineGraceMs ?? 200;
    this.#abandonGrace = options.abandonGraceMs ?? 2_000;
    this.#burst = options.hardCancelBurst ?? 50;
    this.#perSecond = options.hardCancelPerSecond ?? 10;
    this.#maxAnswer = options.maxAnswerBytes ?? 4 * 1024 * 1024;
    this.#maxAnswerDepth = options.maxAnswerDepth ?? SERVER_DEFAULTS.maxJsonDepth;
    this.#onLoad = options.onLoad;
    this.#sendBatch = checkRange("sendBatch", options.sendBatch ?? 64, intRange(1, 1_000_000));
    this.#pool.onClose((address) => {
      this.#links.get(address)?.abandoner.close();
      this.#links.delete(address);
    });
  }

  /** Abandon ids sent and batches written to a peer address (0 when none). */
  abandonStats(address: string): { sent: number; batches: number } {
    const a = this.#links.get(address)?.abandoner;
    return { sent: a?.sent ?? 0, batches: a?.batches ?? 0 };
  }

  branch(peer: PeerId, req: BranchRequest, options: BranchCallOptions): Promise<BranchResult> {
    const clock = this.#clock;
    const start = clock.now();
    const { signal } = options;
    if (signal.aborted) return Promise.resolve({ kind: "abandoned", lostWorkMs: 0 });
    if (!(req.deadline > start)) return Promise.resolve({ kind: "deadline", lostWorkMs: 0 });
    const address = this.#addressOf(peer);
    if (address === undefined) {
      return Promise.resolve(failed("UNAVAILABLE", `peer ${peer}: no known address`));
    }
    let payload: Buffer;
    try {
      payload = this.#encode(req.task);
    } catch (error) {
      return Promise.resolve(failed("INVALID_ARGUMENT", (error as Error).message));
    }
    const link = this.#link(address);
    // W3C trace context travels in the metadata only, where OpenTelemetry's gRPC conventions put it;
    // the request's own `traceparent` field is left unset, so it is not encoded (servers still read it
    // from callers that set it). The branches of one unsampled fan-out share one Metadata (trace.ts).
    const metadata = traceMetadata(options.traceContext);
    const message: BranchRequestMessage = {
      fanoutId: req.fanoutId,
      branchId: req.branchId,
      kind: req.task.kind,
      payload,
      origin: req.origin,
      hop: req.hop,
      deadlineUnixMs: req.deadline,
      deadlineGraceMs: this.#grace,
    };
    const deadline = grpcDeadlineFor(req.deadline, clock, this.#grace);
    return new Promise<BranchResult>((resolve) => {
      const b = new PendingBranch(peer, req.branchId, link, signal, start, resolve);
      b.send = { message, metadata, deadline };
      if (this.#toSend.push(b) === 1 && !this.#sendScheduled) {
        this.#sendScheduled = true;
        void resolved.then(this.#flush);
      }
      this.#waitForAbort(b);
    });
  }

  /** Branch calls started, the turns they took and their CPU, since the transport was made. */
  sendStats(): SendStats {
    return { branches: this.#sent, batches: this.#batches, cpuMicros: this.#sendCpuMicros };
  }

  /**
   * Starts up to `sendBatch` queued calls (first run: the microtask after the fan-out's loop, so a small
   * fan-out still leaves in the same turn), and schedules the rest for the next turn. A branch settled
   * (abandoned) before its turn is not sent.
   */
  readonly #flush = (): void => {
    const queue = this.#toSend;
    const n = Math.min(queue.length, this.#sendBatch);
    const cpu0 = process.threadCpuUsage();
    const m = this.#method;
    for (let i = 0; i < n; i++) {
      const b = queue[i] as PendingBranch;
      const send = b.send;
      b.send = undefined;
      if (b.settled || send === undefined) continue;
      b.call = b.link.client.makeUnaryRequest<BranchRequestMessage, BranchReply__Output>(
        m.path,
        m.requestSerialize as (v: BranchRequestMessage) => Buffer,
        m.responseDeserialize,
        send.message,
        send.metadata,
        { deadline: send.deadline },
        (error, reply) => this.#onReply(b, error, reply),
      );
      this.#sent++;
    }
    const cpu = process.threadCpuUsage(cpu0);
    this.#sendCpuMicros += cpu.user + cpu.system;
    this.#batches++;
    this.#toSend = n === queue.length ? [] : queue.slice(n);
    if (this.#toSend.length > 0) setImmediate(this.#flush);
    else this.#sendScheduled = false;
  };

  /** Closes the abandon streams and, when the pool is private, the channels. */
  close(): void {
    for (const l of this.#links.values()) l.abandoner.close();
    this.#links.clear();
    if (this.#ownsPool) this.#pool.closeAll();
  }

  /**
   * The payload's JSON, encoded once for all the branches a fan-out issues in one synchronous loop
   * (same task object); the cache lives until the next microtask, so later mutation is never missed.
   * The microtask is a promise reaction: `queueMicrotask` creates an AsyncResource per call, which
   * can cost more than the JSON itself on a fan-out's first branch.
   */
  #encode(task: Task): Buffer {
    if (this.#lastTask === task && this.#lastPayload !== undefined) return this.#lastPayload;
    const bytes = encodeJson(task.payload, "task.payload");
    if (this.#lastTask === undefined) void resolved.then(this.#forgetPayload);
    this.#lastTask = task;
    this.#lastPayload = bytes;
    return bytes;
  }

  readonly #forgetPayload = (): void => {
    this.#lastTask = undefined;
    this.#lastPayload = undefined;
  };

  #link(address: string): PeerLink {
    let l = this.#links.get(address);
    if (l === undefined) {
      const client = this.#pool.get(address);
      l = {
        client,
        abandoner: new Abandoner(client),
        rst: new RstBudget(this.#burst, this.#perSecond, this.#clock.now()),
      };
      this.#links.set(address, l);
    }
    return l;
  }

  #onReply(b: PendingBranch, error: ServiceError | null, reply: BranchReply__Output | undefined): void {
    if (b.settled) return;
    if (error) this.#settle(b, this.#fromError(error, b.signal, b.start));
    else if (reply === undefined) this.#settle(b, failed("INTERNAL", `peer ${b.peer}: empty reply`));
    else this.#settle(b, this.#fromReply(b.peer, reply, b.signal));
  }

  /**
   * The caller gave up on `b`: the id goes to the peer on the abandon stream and the call completes
   * with the peer's ABANDONED reply; only if none comes within the abandon grace does the branch
   * settle on its own estimate (and hard-cancel while the RST budget lasts).
   */
  #abandon(b: PendingBranch): void {
    if (b.settled) return;
    if (b.send !== undefined) {
      // not started yet: nothing reached the peer
      this.#settle(b, { kind: "abandoned", lostWorkMs: 0 });
      return;
    }
    b.link.abandoner.abandon(b.branchId);
    const clock = this.#clock;
    b.abandonTimer = clock.setTimer(() => {
      this.#settle(b, { kind: "abandoned", lostWorkMs: clock.now() - b.start });
      if (b.link.rst.take(clock.now())) {
        this.hardCancels++;
        b.call?.cancel();
      }
    }, this.#abandonGrace);
  }

  #settle(b: PendingBranch, r: BranchResult): void {
    if (b.settled) return;
    b.settled = true;
    this.#waiters.get(b.signal)?.delete(b);
    b.abandonTimer?.cancel();
    b.resolve(r);
  }

  /**
   * Queues `b` to wait for its signal's "abort"; the listener itself is added by #arm once the
   * fan-out's requests are on the wire, so the inline cost is an array push.
   */
  #waitForAbort(b: PendingBranch): void {
    if (this.#unarmed.push(b) === 1) setImmediate(this.#arm);
  }

  /**
   * Files the branches queued during the last turn of the event loop under their signals, with one
   * "abort" listener per signal shared by all the branches of a fan-out (a Set entry per branch costs
   * next to nothing).
   *
   * Why later: grpc-js only queues a call's frames; HTTP/2 writes them when the event loop reaches
   * its check phase, where Node runs its native immediates (the write) before JavaScript ones (this).
   * On a fan-out's first branch, with cold caches, adding the listener and its WeakMap and Set entries
   * is slow enough that done inline it delayed every request of the fan-out; here it runs after they left. A branch that settled in between is skipped; an abort in between is
   * caught by `signal.aborted`, and its abandon goes out one turn later than it would have (abandons
   * are batched per turn anyway).
   */
  readonly #arm = (): void => {
    const queued = this.#unarmed;
    this.#unarmed = [];
    for (const b of queued) {
      if (b.settled) continue;
      const { signal } = b;
      let waiting = this.#waiters.get(signal);
      if (waiting === undefined) {
        if (signal.aborted) {
          this.#abandon(b);
          continue;
        }
        const set = new Set<PendingBranch>();
        waiting = set;
        this.#waiters.set(signal, set);
        signal.addEventListener(
          "abort",
          () => {
            this.#waiters.delete(signal);
            for (const w of set) this.#abandon(w);
          },
          { once: true },
        );
      }
      waiting.add(b);
    }
  };

  #fromError(error: ServiceError, signal: AbortSignal, start: number): BranchResult {
    const elapsed = this.#clock.now() - start;
    if (error.code === Status.DEADLINE_EXCEEDED) {
      return signal.aborted
        ? { kind: "abandoned", lostWorkMs: elapsed }
        : { kind: "deadline", lostWorkMs: elapsed };
    }
    if (error.code === Status.CANCELLED && signal.aborted) return { kind: "abandoned", lostWorkMs: elapsed };
    // A peer's status details are its own text: bounded before they reach this node's messages.
    return failed(grpcStatusName(error.code), clip(error.details || error.message, MAX_RELAYED_CHARS));
  }

  #fromReply(peer: PeerId, reply: BranchReply__Output, signal: AbortSignal): BranchResult {
    if (reply.load) this.#onLoad?.(peer, reply.load);
    const lost = ms(reply.lostWorkMs);
    switch (reply.status) {
      case "BRANCH_STATUS_ANSWERED": {
        if (signal.aborted) return { kind: "abandoned", lostWorkMs: ms(reply.serviceMs) };
        let answer: unknown;
        try {
          answer = decodeJson(
            reply.answer,
            `answer from peer ${peer}`,
            this.#maxAnswer,
            this.#maxAnswerDepth,
          );
        } catch (error) {
          return failed("MALFORMED_ANSWER", (error as Error).message);
        }
        return { kind: "answer", answer, serviceMs: ms(reply.serviceMs), queueMs: ms(reply.queueMs) };
      }
      case "BRANCH_STATUS_ABANDONED":
        return signal.aborted
          ? { kind: "abandoned", lostWorkMs: lost }
          : failed("ABORTED", `peer ${peer} stopped the branch itself (shutting down)`);
      case "BRANCH_STATUS_EXPIRED":
        return { kind: "deadline", lostWorkMs: lost };
      default:
        return failed(
          "MALFORMED_ANSWER",
          `peer ${peer}: branch status ${String(reply.status)}, expected ANSWERED, ABANDONED or EXPIRED`,
        );
    }
  }
}

/** A branch in flight: what settling it needs, held in one object instead of closures per branch. */
class PendingBranch {
  call: ClientUnaryCall | undefined;
  /** The call to start, until #flush starts it. */
  send: { message: BranchRequestMessage; metadata: Metadata; deadline: Deadline } | undefined;
  abandonTimer: TimerHandle | undefined;
  settled = false;

  constructor(
    readonly peer: PeerId,
    readonly branchId: string,
    readonly link: PeerLink,
    readonly signal: AbortSignal,
    readonly start: number,
    readonly resolve: (r: BranchResult) => void,
  ) {}
}

const resolved = Promise.resolve();

/** The most characters of a peer's error text a failed branch keeps. */
const MAX_RELAYED_CHARS = 400;

function failed(code: string, message: string): BranchResult {
  return { kind: "failed", code, message };
}

function ms(v: unknown): number {
  return typeof v === "number" && Number.isFinite(v) && v > 0 ? v : 0;
}
