/**
 * The testbed's gRPC client of one node: `Coordinate` (the caller's budget as the gRPC deadline),
 * `Branch` (the direct fan-out measurement) and `Probe` (readiness). Never rejects: every call ends
 * in a value or an error code.
 */
import * as grpc from "@grpc/grpc-js";
import { swarmService } from "../mesh/proto.js";
import { grpcStatusName } from "../mesh/status.js";
import type { BranchReply__Output } from "../mesh/gen/tailswarm/v1/BranchReply.js";
import type { CoordinateReply__Output } from "../mesh/gen/tailswarm/v1/CoordinateReply.js";
import type { ProbeReply__Output } from "../mesh/gen/tailswarm/v1/ProbeReply.js";

export type CallResult<T> =
  | { readonly ok: true; readonly value: T; readonly rttMs: number }
  | { readonly ok: false; readonly code: string; readonly message: string; readonly rttMs: number };

export interface CoordinateCall {
  readonly kind: string;
  readonly payload: unknown;
  readonly policy: string;
  readonly decision: string;
  readonly options: unknown;
  readonly budgetMs: number;
  /** Any k of these replicas, hedged (the replicated-tail scenario). */
  readonly replicated?: {
    readonly replicas: readonly string[];
    readonly k: number;
    readonly hedgePolicy: string;
  };
}

export class SwarmClient {
  readonly address: string;
  readonly #client: grpc.Client;

  constructor(address: string) {
    this.address = address;
    this.#client = new grpc.Client(address, grpc.credentials.createInsecure(), {
      "grpc.initial_reconnect_backoff_ms": 100,
      "grpc.max_reconnect_backoff_ms": 1_000,
    });
  }

  coordinate(c: CoordinateCall): Promise<CallResult<CoordinateReply__Output>> {
    const m = swarmService().Coordinate;
    return this.#unary(
      m,
      {
        kind: c.kind,
        payload: Buffer.from(JSON.stringify(c.payload)),
        required: 0,
        policy: c.policy,
        decision: c.decision,
        options: Buffer.from(JSON.stringify(c.options)),
        ...(c.replicated !== undefined && {
          replicated: { ...c.replicated, replicas: [...c.replicated.replicas] },
        }),
      },
      c.budgetMs,
    );
  }

  branch(
    fanoutId: string,
    branchId: string,
    kind: string,
    payload: unknown,
    timeoutMs: number,
  ): Promise<CallResult<BranchReply__Output>> {
    const m = swarmService().Branch;
    return this.#unary(
      m,
      {
        fanoutId,
        branchId,
        kind,
        payload: Buffer.from(JSON.stringify(payload)),
        origin: "testbed",
        hop: 0,
        deadlineUnixMs: Date.now() + timeoutMs,
        deadlineGraceMs: 0,
      },
      timeoutMs,
    );
  }

  probe(timeoutMs: number): Promise<CallResult<ProbeReply__Output>> {
    const m = swarmService().Probe;
    return this.#unary(m, { sentUnixMs: Date.now() }, timeoutMs);
  }

  close(): void {
    this.#client.close();
  }

  #unary<Req, Res>(
    m: grpc.MethodDefinition<Req, Res>,
    req: Req,
    timeoutMs: number,
  ): Promise<CallResult<Res>> {
    const start = performance.now();
    return new Promise((resolve) => {
      try {
        this.#client.makeUnaryRequest(
          m.path,
          m.requestSerialize,
          m.responseDeserialize,
          req,
          new grpc.Metadata(),
          { deadline: Date.now() + timeoutMs },
          (err, value) => {
            const rttMs = performance.now() - start;
            if (err !== null || value === undefined) {
              resolve({
                ok: false,
                code: grpcStatusName(err?.code ?? grpc.status.UNKNOWN),
                message: err?.details ?? "no reply",
                rttMs,
              });
            } else resolve({ ok: true, value, rttMs });
          },
        );
      } catch (error) {
        resolve({ ok: false, code: "INTERNAL", message: String(error), rttMs: performance.now() - start });
      }
    });
  }
}
