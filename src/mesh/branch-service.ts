/**
 * Server side of `Branch`: validate, admit through the FIFO work queue, run the handler with an
 * AbortSignal that fires on Abandon, on the logical deadline, on cancellation or on shutdown, and
 * reply — always normally when the work was stopped, with the real lost work.
 *
 * Each call gets a SERVER span (`tailswarm.v1.Swarm/Branch`, RPC semantic conventions) whose parent is
 * the caller's context from the W3C `traceparent` in the metadata (or the request's own field); the
 * handler runs with it active, so a fan-out the handler starts joins the caller's trace.
 */
import { callerOf } from "./authz.js";
import { context } from "@opentelemetry/api";
import type { Context } from "@opentelemetry/api";
import { status as Status } from "@grpc/grpc-js";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { clip, TailswarmError, invalid } from "../errors.js";
import { decodeJson, encodeJson } from "./codec.js";
import { chainAbort, remainingMs } from "./deadline.js";
import { abortReason } from "./server-core.js";
import type { ServerCore } from "./server-core.js";
import { serviceError, toServiceError } from "./status.js";
import { extractTraceContext } from "./trace.js";
import type { TaskHandler } from "./handler.js";
import { SWARM_SERVICE_NAME } from "./proto.js";
import type { BranchReply } from "./gen/tailswarm/v1/BranchReply.js";
import type { BranchRequest__Output } from "./gen/tailswarm/v1/BranchRequest.js";
import type { BranchStatus__Output } from "./gen/tailswarm/v1/BranchStatus.js";
import { ATTR } from "../telemetry/attributes.js";
import { startServerRpcSpan } from "../telemetry/rpc-spans.js";
import type { RpcSpan } from "../telemetry/rpc-spans.js";

type Call = ServerUnaryCall<BranchRequest__Output, BranchReply>;
type Reply = sendUnaryData<BranchReply>;

const EMPTY = Buffer.alloc(0);
/** Fully-qualified method: the server span's name and `rpc.method`. */
const BRANCH_METHOD = `${SWARM_SERVICE_NAME}/Branch`;

/** "BRANCH_STATUS_ANSWERED" → "answered". */
function statusLabel(status: BranchStatus__Output): string {
  return status.slice("BRANCH_STATUS_".length).toLowerCase();
}

function unknownKind(core: ServerCore, kind: string): TailswarmError {
  const known = core.handlers.kinds();
  return invalid(
    "kind",
    kind,
    `a kind node ${core.nodeId} serves: ${known.length > 0 ? known.join(", ") : "(no handlers registered)"}`,
    { code: "UNKNOWN_TASK_KIND" },
  );
}

/**
 * The logical deadline on `core.clock`. The gRPC deadline (minus the caller's grace) is skew-free but
 * stretched by the request's transit and connection setup (the server starts the relative timeout on
 * arrival); the caller's absolute `deadline_unix_ms` is exact when clocks agree. Use the earlier of
 * the two when they differ by at most `callerClockToleranceMs` (clocks agree), else the gRPC one.
 */
function logicalDeadline(core: ServerCore, call: Call, req: BranchRequest__Output, now: number): number {
  const left = remainingMs(call);
  const byCaller = req.deadlineUnixMs > 0 ? req.deadlineUnixMs : Infinity;
  const latest = now + core.limits.maxDeadlineMs;
  if (left === Infinity) {
    return Math.min(latest, byCaller === Infinity ? now + core.limits.defaultBudgetMs : byCaller);
  }
  const byGrpc = now + left - Math.max(0, req.deadlineGraceMs);
  const cut =
    Math.abs(byGrpc - byCaller) <= core.limits.callerClockToleranceMs ? Math.min(byGrpc, byCaller) : byGrpc;
  return Math.min(latest, cut);
}

export function makeBranchHandler(core: ServerCore): (call: Call, callback: Reply) => void {
  return (call, callback) => {
    const rpc = startServerRpcSpan(BRANCH_METHOD, call, {
      parent: extractTraceContext(call.metadata, call.request.traceparent),
      sampling: core.sampling,
    });
    // Every answer goes through here, so the span ends with the status the caller sees.
    const done: Reply = (error, value, trailer, flags) => {
      if (error) rpc.end(error.code ?? Status.UNKNOWN, { message: error.details });
      else rpc.end(Status.OK);
      callback(error, value, trailer, flags);
    };
    try {
      serveBranch(core, call, done, rpc);
    } catch (error) {
      done(toServiceError(error, "branch"));
    }
  };
}

function serveBranch(core: ServerCore, call: Call, callback: Reply, rpc: RpcSpan): void {
  const { clock } = core;
  const arrived = clock.now();
  const req = call.request;
  if (core.draining) {
    callback(serviceError(Status.UNAVAILABLE, `node ${core.nodeId} is draining`));
    return;
  }
  const handler = core.handlers.get(req.kind);
  if (handler === undefined) throw unknownKind(core, req.kind);
  const payload = decodeJson(req.payload, "payload", core.limits.maxPayloadBytes, core.limits.maxJsonDepth);
  const cut = logicalDeadline(core, call, req, arrived);
  if (!(cut > arrived)) {
    throw new TailswarmError(
      "DEADLINE_EXCEEDED",
      `deadline: passed ${(arrived - cut).toFixed(1)} ms before branch ${clip(req.branchId)} could start on node ${core.nodeId}, expected a deadline in the future`,
    );
  }

  const abort = chainAbort();
  const { signal } = abort;
  const reply = (status: BranchStatus__Output, fields: Partial<BranchReply>): void => {
    if (rpc.span.isRecording()) {
      rpc.span.setAttributes({
        [ATTR.fanoutId]: req.fanoutId,
        [ATTR.branchId]: req.branchId,
        [ATTR.taskKind]: req.kind,
        [ATTR.hop]: req.hop,
        [ATTR.branchStatus]: statusLabel(status),
        [ATTR.branchQueueMs]: fields.queueMs ?? 0,
        [ATTR.branchServiceMs]: fields.serviceMs ?? 0,
        [ATTR.branchLostWorkMs]: fields.lostWorkMs ?? 0,
      });
    }
    callback(null, {
      status,
      answer: EMPTY,
      serviceMs: 0,
      queueMs: 0,
      lostWorkMs: 0,
      load: core.load(),
      nodeId: core.nodeId,
      ...fields,
    });
  };
  const issuer = callerOf(call);
  if (!core.abandons.add(req.branchId, abort.controller, issuer)) {
    abort.dispose();
    reply("BRANCH_STATUS_ABANDONED", {});
    return;
  }
  const what = `branch ${clip(req.branchId)}`;
  const onCancelled = (): void => abort.abort(abortReason("cancelled", what));
  call.on("cancelled", onCancelled);
  const timer = clock.setTimer(() => abort.abort(abortReason("deadline", what)), cut - arrived);
  const cleanup = (): void => {
    timer.cancel();
    abort.dispose();
    call.removeListener("cancelled", onCancelled);
    core.abandons.delete(req.branchId, abort.controller, issuer);
  };
  const stoppedStatus = (): BranchStatus__Output =>
    TailswarmError.is(signal.reason, "DEADLINE_EXCEEDED")
      ? "BRANCH_STATUS_EXPIRED"
      : "BRANCH_STATUS_ABANDONED";

  const fail = (error: unknown): void => {
    const e = TailswarmError.is(error)
      ? error
      : new TailswarmError(
          "INTERNAL",
          `handler "${req.kind}" failed on node ${core.nodeId}: ${
            error instanceof Error ? error.message : String(error)
          }`,
          { cause: error },
        );
    callback(toServiceError(e, "branch"));
  };

  let slot: true | Promise<void>;
  try {
    slot = core.queue.acquire(signal);
  } catch (error) {
    cleanup();
    throw error;
  }
  const branch: Running = {
    traceContext: rpc.context,
    handler,
    call,
    req,
    payload,
    cut,
    signal,
    arrived,
    reply,
    fail,
    stoppedStatus,
    cleanup,
  };
  if (slot === true) {
    runHandler(core, branch);
    return;
  }
  slot.then(
    () => runHandler(core, branch),
    () => {
      cleanup();
      reply(stoppedStatus(), { queueMs: clock.now() - arrived });
    },
  );
}

interface Running {
  /** The server span's context: active while the handler runs. */
  traceContext: Context;
  handler: TaskHandler;
  call: Call;
  req: BranchRequest__Output;
  payload: unknown;
  cut: number;
  signal: AbortSignal;
  arrived: number;
  reply(status: BranchStatus__Output, fields: Partial<BranchReply>): void;
  fail(error: unknown): void;
  stoppedStatus(): BranchStatus__Output;
  cleanup(): void;
}

/** Runs the handler in its slot; the slot is released when the handler really settles. */
function runHandler(core: ServerCore, b: Running): void {
  const { clock } = core;
  const { signal, req } = b;
  const started = clock.now();
  const queueMs = started - b.arrived;
  let replied = false;
  let graceTimer: { cancel(): void } | undefined;
  const settle = (): boolean => {
    if (replied) return false;
    replied = true;
    graceTimer?.cancel();
    signal.removeEventListener("abort", onAbort);
    b.cleanup();
    return true;
  };
  const replyStopped = (): void => {
    if (settle()) b.reply(b.stoppedStatus(), { queueMs, lostWorkMs: clock.now() - started });
  };
  // After an abort the handler gets a short grace to stop; the reply does not wait longer.
  const onAbort = (): void => {
    graceTimer = clock.setTimer(replyStopped, core.limits.abandonReplyGraceMs);
  };
  signal.addEventListener("abort", onAbort, { once: true });

  const ctx = {
    signal,
    deadline: b.cut - core.limits.deadlineReserveMs,
    fanoutId: req.fanoutId,
    hop: req.hop,
    origin: req.origin,
    traceContext: b.traceContext,
  };
  const task = { kind: req.kind, payload: b.payload };
  let work: Promise<unknown>;
  try {
    work = context.with(b.traceContext, () => b.handler.handle(task, ctx));
  } catch (error) {
    work = Promise.reject(error);
  }
  work
    .then(
      (answer) => {
        if (signal.aborted) return replyStopped();
        if (!settle()) return;
        let bytes: Buffer;
        try {
          bytes = encodeJson(answer, `answer of handler "${req.kind}"`);
        } catch (error) {
          // The peer's own answer is bad: that is the node's fault, not the caller's argument.
          b.fail(new TailswarmError("INTERNAL", (error as Error).message, { cause: error }));
          return;
        }
        b.reply("BRANCH_STATUS_ANSWERED", { answer: bytes, queueMs, serviceMs: clock.now() - started });
      },
      (error: unknown) => {
        if (signal.aborted) return replyStopped();
        if (settle()) b.fail(error);
      },
    )
    .finally(() => core.queue.release());
}
