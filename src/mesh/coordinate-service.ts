/**
 * Server side of `Coordinate`: request checks, budget from the incoming deadline, the node's callback.
 * Each call gets a SERVER span (`tailswarm.v1.Swarm/Coordinate`) under the caller's W3C context; the
 * callback runs with it active, so the fan-out span (and its branches, and the peers' server spans)
 * hang under it in one trace.
 */
import { context } from "@opentelemetry/api";
import type { sendUnaryData, ServerUnaryCall } from "@grpc/grpc-js";
import { status as Status } from "@grpc/grpc-js";
import { invalid } from "../errors.js";
import { decodeJson, encodeJson } from "./codec.js";
import type { CoordinateFn } from "./coordinate.js";
import { chainAbort, incomingDeadline, workDeadline } from "./deadline.js";
import type { CoordinateReply__Output } from "./gen/tailswarm/v1/CoordinateReply.js";
import type { CoordinateRequest__Output } from "./gen/tailswarm/v1/CoordinateRequest.js";
import type { Reserve } from "./reply-reserve.js";
import { abortReason } from "./server-core.js";
import type { ServerCore } from "./server-core.js";
import { serviceError, toServiceError } from "./status.js";
import { extractTraceContext } from "./trace.js";
import { SWARM_SERVICE_NAME } from "./proto.js";
import { startServerRpcSpan } from "../telemetry/rpc-spans.js";

type Call = ServerUnaryCall<CoordinateRequest__Output, CoordinateReply__Output>;
type Reply = sendUnaryData<CoordinateReply__Output>;

/** Fully-qualified method: the server span's name and `rpc.method`. */
const COORDINATE_METHOD = `${SWARM_SERVICE_NAME}/Coordinate`;

export function makeCoordinateHandler(
  core: ServerCore,
  coordinate: CoordinateFn | undefined,
): (call: Call, callback: Reply) => void {
  return (call, reply) => {
    const rpc = startServerRpcSpan(COORDINATE_METHOD, call, {
      parent: extractTraceContext(call.metadata),
      sampling: core.sampling,
    });
    // Every answer goes through here, so the span ends with the status the caller sees.
    const callback: Reply = (error, value, trailer, flags) => {
      if (error) rpc.end(error.code ?? Status.UNKNOWN, { message: error.details });
      else rpc.end(Status.OK);
      reply(error, value, trailer, flags);
    };
    if (coordinate === undefined) {
      callback(
        serviceError(
          Status.UNIMPLEMENTED,
          `node ${core.nodeId} does not coordinate (no coordinator configured)`,
        ),
      );
      return;
    }
    if (core.draining) {
      callback(serviceError(Status.UNAVAILABLE, `node ${core.nodeId} is draining`));
      return;
    }
    let cleanup = (): void => {};
    try {
      const { clock, limits } = core;
      const req = call.request;
      const now = clock.now();
      if (req.kind === "") {
        throw invalid("kind", req.kind, "a task kind");
      }
      if (req.budgetMs < 0 || !Number.isFinite(req.budgetMs)) {
        throw invalid("budget_ms", req.budgetMs, "a number >= 0");
      }
      const payload = decodeJson(req.payload, "payload", limits.maxPayloadBytes, limits.maxJsonDepth);
      const options = decodeJson(req.options, "options", limits.maxPayloadBytes, limits.maxJsonDepth);
      const incoming = incomingDeadline(call, clock);
      // budget_ms caps the deadline; with neither, the node's default budget applies; maxDeadlineMs always.
      const cap = Math.min(
        now + limits.maxDeadlineMs,
        req.budgetMs > 0
          ? now + req.budgetMs
          : incoming === Infinity
            ? now + limits.defaultBudgetMs
            : Infinity,
      );
      // While the node is overloaded (it sheds, or the call waits for a slot), its loop's lateness is the
      // load, not a passing stall, and a reply must still arrive in time: replyReserveMaxMs does not cap
      // the reserve then (the share still does).
      const reserve = core.replyReserve.current(
        now,
        incoming - now,
        core.coordinateAdmission.saturated ? Infinity : undefined,
      );
      const deadline = workDeadline(incoming, reserve.ms, cap);
      if (!(deadline > now)) {
        throw invalid("deadline", ms1(incoming - now), `more than ${reserveText(reserve)}`, {
          code: "DEADLINE_EXCEEDED",
          source: `ms left on arrival at node ${core.nodeId}`,
        });
      }
      const abort = chainAbort();
      core.abandons.add("", abort.controller);
      const onCancelled = (): void => abort.abort(abortReason("cancelled", "coordinate"));
      call.on("cancelled", onCancelled);
      const timer = clock.setTimer(() => abort.abort(abortReason("deadline", "coordinate")), deadline - now);
      core.coordinating++;
      let admittedAt: number | undefined;
      cleanup = () => {
        cleanup = () => {};
        core.coordinating--;
        if (admittedAt !== undefined) core.coordinateAdmission.release(clock.now() - admittedAt);
        timer.cancel();
        abort.dispose();
        core.abandons.delete("", abort.controller);
        call.removeListener("cancelled", onCancelled);
      };
      const ctx = {
        signal: abort.signal,
        deadline,
        // the node's measured overhead needs the whole time left: decide with no budget (degrade at once)
        budgetMs: reserve.wantedMs >= incoming - now ? 0 : deadline - now,
        traceContext: rpc.context,
      };
      const request = {
        task: { kind: req.kind, payload },
        required: req.required,
        ...(req.policy !== "" ? { policy: req.policy } : {}),
        ...(req.decision !== "" ? { decision: req.decision } : {}),
        ...(options !== null ? { options } : {}),
        ...(req.replicated != null && {
          replicated: {
            replicas: req.replicated.replicas,
            k: req.replicated.k,
            ...(req.replicated.hedgePolicy !== "" && { hedgePolicy: req.replicated.hedgePolicy }),
          },
        }),
      };
      // Refused at once when full or when the wait would outlast the deadline; a queued call whose
      // deadline passes (or whose caller cancels) leaves the queue without running.
      const slot = core.coordinateAdmission.acquire(abort.signal, deadline - now);
      const run = (): Promise<Awaited<ReturnType<CoordinateFn>>> => {
        admittedAt = clock.now();
        return context.with(rpc.context, () => coordinate(request, ctx));
      };
      (slot === true ? run() : slot.then(run)).then(
        (r) => {
          cleanup();
          const handed = clock.now();
          const started = admittedAt ?? now;
          // the fan-out's wait ended at its deadline, or earlier when it ended earlier
          const waitEnd = Math.min(deadline, started + r.elapsedMs);
          const decideMs = Math.min(r.decidedMs ?? r.elapsedMs, r.elapsedMs);
          try {
            callback(null, {
              action: encodeJson(r.action, "action"),
              mode: r.mode,
              reason: r.reason,
              fanoutP50Ms: r.fanoutP50Ms,
              fanoutP99Ms: r.fanoutP99Ms,
              committed: r.committed,
              abandoned: r.abandoned,
              fanoutId: r.fanoutId,
              failed: r.failed,
              late: r.late,
              degraded: r.degraded,
              decisionChanged: r.decisionChanged,
              elapsedMs: r.elapsedMs,
              budgetMs: r.budgetMs,
              abandonCostMs: r.abandonCostMs,
              decidedAbandonCostMs: r.decidedAbandonCostMs ?? NaN,
              violation: r.violation ?? "",
              nodeId: core.nodeId,
              branches: (r.branches ?? []).map((b) => ({ ...b })),
              ...(r.infoGainPerCommitted != null && { infoGainPerCommitted: r.infoGainPerCommitted }),
              deadlineMissed: r.deadlineMissed ?? false,
              noAnswer: r.noAnswer ?? false,
              estimateBasis: r.estimateBasis ?? "",
              fanoutP50Kind: r.fanoutP50Kind ?? "",
              fanoutP99Kind: r.fanoutP99Kind ?? "",
              ...(r.fanoutHorizonMs !== undefined && { fanoutHorizonMs: r.fanoutHorizonMs }),
              backups: (r.backups ?? []).map((b) => ({ ...b })),
              refused: (r.refused ?? []).map((x) => ({ ...x })),
              timing: {
                arrivalLeftMs: incoming === Infinity ? 0 : incoming - now,
                reserveMs: reserve.ms,
                reserveWantedMs: reserve.wantedMs,
                reserveOverheadMs: reserve.overheadMs,
                reserveLoopMs: reserve.loopMs,
                queuedMs: started - now,
                decideMs,
                waitMs: r.elapsedMs - decideMs,
                replyMs: handed - (started + r.elapsedMs),
              },
            });
            // the reply is written out in the turns that follow the callback: measured after them
            setImmediate(() => {
              const sent = clock.now();
              core.replyReserve.record(sent - waitEnd, sent);
              core.replyMetrics.reply(r.mode, sent >= incoming, reserve.ms);
            });
          } catch (error) {
            callback(toServiceError(error, "coordinate"));
          }
        },
        (error: unknown) => {
          cleanup();
          callback(toServiceError(error, "coordinate"));
        },
      );
    } catch (error) {
      cleanup();
      callback(toServiceError(error, "coordinate"));
    }
  };
}

const ms1 = (ms: number): number => Math.round(ms * 10) / 10;

/** The reserve kept and what it wanted, by part: transit + overhead + event-loop lateness, ms. */
function reserveText(r: Reserve): string {
  const bound = r.ms < r.wantedMs ? "capped; " : r.ms > r.wantedMs ? "raised to replyReserveMinMs; " : "";
  const overhead = r.kind === "measured" ? "overhead p99" : "overhead (largest seen)";
  return (
    `the ${ms1(r.ms)} ms reply reserve kept (${bound}wanted ${ms1(r.wantedMs)} = ${ms1(r.transitMs)} transit + ` +
    `${ms1(r.overheadMs)} ${overhead} + ${ms1(r.loopMs)} event-loop lateness)`
  );
}
