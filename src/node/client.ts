/**
 * A small client of one node for the CLI's client verbs and for tests: health check,
 * `NodeStatus/Status`, `Swarm/Coordinate` and `Decisions/Recent`, over one channel (TLS when given).
 *
 * @example
 * const client = new NodeClient("127.0.0.1:7400");
 * const reply = await client.coordinate({ kind: "vote", payload: { question: "ship?" } }, 200);
 * client.close();
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import type { ChannelCredentials, ChannelOptions } from "@grpc/grpc-js";
import { decodeJson, encodeJson } from "../mesh/codec.js";
import { swarmService } from "../mesh/proto.js";
import { unaryCall } from "../mesh/unary-call.js";
import type { CoordinateBranch__Output } from "../mesh/gen/tailswarm/v1/CoordinateBranch.js";
import type { CoordinateReply__Output } from "../mesh/gen/tailswarm/v1/CoordinateReply.js";
import type { CoordinateTiming__Output } from "../mesh/gen/tailswarm/v1/CoordinateTiming.js";
import type { CoordinateRequest } from "../mesh/gen/tailswarm/v1/CoordinateRequest.js";
import { fetchDecisions } from "../telemetry/decisions-service.js";
import type { RecentDecisions } from "../telemetry/decisions-service.js";
import { nodeStatusService } from "./status-proto.js";
import type { StatusReply__Output } from "../mesh/gen/tailswarm/v1/StatusReply.js";
import type { StatusRequest } from "../mesh/gen/tailswarm/v1/StatusRequest.js";

export interface ClientTls {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  /** Name the server's certificate must carry, when it is not the address dialed (a pod IP). */
  readonly serverName?: string;
}

export interface CoordinateCall {
  readonly kind: string;
  readonly payload?: unknown;
  readonly required?: number;
  readonly policy?: string;
  readonly decision?: string;
  readonly options?: unknown;
}

/**
 * A node's answer to Coordinate, as `tailswarm coordinate --json` prints it (docs/configuration.md,
 * "Client verbs"): every field always present; a number the node could not give is null in JSON.
 */
export interface CoordinateAnswer {
  readonly action: unknown;
  readonly mode: string;
  readonly reason: string;
  /** The SpeculationBudgetViolation's code, "" when none. */
  readonly violation: string;
  /** The fan-out p50/p99 decided on; NaN (null in JSON) when the estimate had no number. */
  readonly fanoutP50Ms: number;
  readonly fanoutP99Ms: number;
  /** "observed" | "independent"; "" from nodes that do not say. */
  readonly estimateBasis: string;
  /**
   * What fanoutP50Ms / fanoutP99Ms are: "known", "lower-bound" (the true quantile is at least the number)
   * or "unknown" (no fresh estimate); "" from nodes that do not say.
   */
  readonly fanoutP50Kind: string;
  readonly fanoutP99Kind: string;
  /**
   * The estimate's horizon, ms: its window holds only cut or unfinished calls beyond it, so a quantile at
   * or past it is a lower bound. Null when there is none (nothing censored beyond the completions, no
   * estimate) or the node does not say.
   */
  readonly fanoutHorizonMs: number | null;
  readonly abandonCostMs: number;
  /** The abandon cost the rule decided with (the deciding policy's own ledger); NaN (null in JSON) when the node gave none. */
  readonly decidedAbandonCostMs: number;
  readonly elapsedMs: number;
  /** The budget the rule decided with, ms. */
  readonly budgetMs: number;
  readonly deadlineMissed: boolean;
  /** The fan-out ran but no peer answered by its deadline: the action is the model's prior. */
  readonly noAnswer: boolean;
  readonly committed: number;
  readonly abandoned: number;
  readonly late: number;
  readonly failed: number;
  readonly degraded: boolean;
  readonly decisionChanged: boolean;
  /** Null when nothing was committed. */
  readonly infoGainPerCommitted: number | null;
  readonly nodeId: string;
  readonly fanoutId: string;
  readonly branches: readonly CoordinateBranch__Output[];
  /** Where the call's time went on the coordinator, ms (null from nodes that do not say). */
  readonly timing: CoordinateTiming__Output | null;
}

const finite = (v: number | undefined): number | null =>
  typeof v === "number" && Number.isFinite(v) ? v : null;

/** The reply field by field, so that `--json` prints the answer's fields and nothing the decoder adds. */
function answerOf(r: CoordinateReply__Output): CoordinateAnswer {
  return {
    action: decodeJson(r.action, "action"),
    mode: r.mode,
    reason: r.reason,
    violation: r.violation,
    fanoutP50Ms: r.fanoutP50Ms,
    fanoutP99Ms: r.fanoutP99Ms,
    estimateBasis: r.estimateBasis,
    fanoutP50Kind: r.fanoutP50Kind,
    fanoutP99Kind: r.fanoutP99Kind,
    fanoutHorizonMs: finite(r.fanoutHorizonMs),
    abandonCostMs: r.abandonCostMs,
    decidedAbandonCostMs: r.decidedAbandonCostMs,
    elapsedMs: r.elapsedMs,
    budgetMs: r.budgetMs,
    deadlineMissed: r.deadlineMissed,
    noAnswer: r.noAnswer,
    committed: r.committed,
    abandoned: r.abandoned,
    late: r.late,
    failed: r.failed,
    degraded: r.degraded,
    decisionChanged: r.decisionChanged,
    infoGainPerCommitted: finite(r.infoGainPerCommitted),
    nodeId: r.nodeId,
    fanoutId: r.fanoutId,
    branches: (r.branches ?? []).map((b) => ({
      peer: b.peer,
      outcome: b.outcome,
      decisionRelevant: b.decisionRelevant,
      latencyMs: b.latencyMs,
      lostWorkMs: b.lostWorkMs,
      unsettled: b.unsettled,
    })),
    timing: r.timing != null ? { ...r.timing } : null,
  };
}

/** Credentials and channel options for `tls` (plaintext when it names no CA and no certificate). */
function channelSetup(tls: ClientTls | undefined): {
  credentials: ChannelCredentials;
  options: ChannelOptions;
} {
  const credentials =
    tls === undefined || (tls.ca === undefined && tls.cert === undefined)
      ? grpc.credentials.createInsecure()
      : grpc.credentials.createSsl(
          tls.ca === undefined ? null : readFileSync(tls.ca),
          tls.key === undefined ? null : readFileSync(tls.key),
          tls.cert === undefined ? null : readFileSync(tls.cert),
        );
  const options = tls?.serverName === undefined ? {} : { "grpc.ssl_target_name_override": tls.serverName };
  return { credentials, options };
}

export class NodeClient {
  readonly #client: grpc.Client;
  readonly #address: string;
  readonly #setup: { credentials: ChannelCredentials; options: ChannelOptions };

  constructor(address: string, tls?: ClientTls) {
    this.#address = address;
    this.#setup = channelSetup(tls);
    this.#client = new grpc.Client(address, this.#setup.credentials, this.#setup.options);
  }

  /**
   * Waits up to `timeoutMs` for the channel to be ready (or to have failed: the next call then says
   * why), so that a call's deadline counts from a connection and not from name resolution and the
   * handshake: `coordinate`'s deadline is the node's budget.
   */
  async connect(timeoutMs = 5_000): Promise<void> {
    const channel = this.#client.getChannel();
    const deadline = Date.now() + timeoutMs;
    const { READY, TRANSIENT_FAILURE, SHUTDOWN } = grpc.connectivityState;
    let state = channel.getConnectivityState(true);
    while (state !== READY && state !== TRANSIENT_FAILURE && state !== SHUTDOWN && Date.now() < deadline) {
      await new Promise<void>((resolve) => channel.watchConnectivityState(state, deadline, () => resolve()));
      state = channel.getConnectivityState(false);
    }
  }

  /** The node's Status; `rows` picks the peer rows it carries (default: every one). */
  status(timeoutMs = 5_000, rows: StatusRequest = {}): Promise<StatusReply__Output> {
    const def = nodeStatusService().Status!;
    return unaryCall<StatusRequest, StatusReply__Output>(this.#client, def, rows, timeoutMs);
  }

  /** Runs `Coordinate` with a gRPC deadline of `deadlineMs` from now. */
  async coordinate(call: CoordinateCall, deadlineMs: number): Promise<CoordinateAnswer> {
    const req: CoordinateRequest = {
      kind: call.kind,
      payload: encodeJson(call.payload, "payload"),
      required: call.required ?? 0,
      policy: call.policy ?? "",
      budgetMs: 0,
      decision: call.decision ?? "",
      options: encodeJson(call.options, "options"),
    };
    const reply = await unaryCall<CoordinateRequest, CoordinateReply__Output>(
      this.#client,
      swarmService().Coordinate,
      req,
      deadlineMs,
    );
    return answerOf(reply);
  }

  /** The node's flight recorder: its last `last` decisions (all it keeps when absent), newest first. */
  decisions(last?: number, timeoutMs = 5_000): Promise<RecentDecisions> {
    return fetchDecisions(this.#address, {
      ...(last !== undefined && { last }),
      deadlineMs: timeoutMs,
      credentials: this.#setup.credentials,
      channelOptions: this.#setup.options,
    });
  }

  /** grpc.health.v1 status of `service` ("" is the whole server): SERVING, NOT_SERVING, … */
  async health(service = "", timeoutMs = 2_000): Promise<string> {
    const path = "/grpc.health.v1.Health/Check";
    const encode = (s: string): Buffer => {
      const b = Buffer.from(s, "utf8");
      return b.length === 0 ? Buffer.alloc(0) : Buffer.concat([Buffer.from([0x0a, b.length]), b]);
    };
    const names = ["UNKNOWN", "SERVING", "NOT_SERVING", "SERVICE_UNKNOWN"];
    const decode = (buf: Buffer): string =>
      buf.length >= 2 && buf[0] === 0x08 ? (names[buf[1]!] ?? "UNKNOWN") : "UNKNOWN";
    return unaryCall<string, string>(
      this.#client,
      { path, requestSerialize: encode, responseDeserialize: decode },
      service,
      timeoutMs,
    );
  }

  close(): void {
    this.#client.close();
  }
}
