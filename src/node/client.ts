/**
 * A small client of one node for the CLI's `status` and `coordinate` verbs and for tests: health
 * check, `NodeStatus/Status` and `Swarm/Coordinate`, over one channel (TLS when given).
 *
 * @example
 * const client = new NodeClient("127.0.0.1:7400");
 * const reply = await client.coordinate({ kind: "vote", payload: { question: "ship?" } }, 200);
 * client.close();
 */
import { readFileSync } from "node:fs";
import * as grpc from "@grpc/grpc-js";
import { Metadata } from "@grpc/grpc-js";
import type { ServiceError } from "@grpc/grpc-js";
import { decodeJson, encodeJson } from "../mesh/codec.js";
import { swarmService } from "../mesh/proto.js";
import type { WireCoordinateReply, WireCoordinateRequest } from "../mesh/proto.js";
import { nodeStatusService } from "./status-proto.js";
import type { WireStatusReply } from "./status-proto.js";

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

export type CoordinateAnswer = Omit<WireCoordinateReply, "action"> & { action: unknown };

export class NodeClient {
  readonly #client: grpc.Client;

  constructor(address: string, tls?: ClientTls) {
    const creds =
      tls === undefined || (tls.ca === undefined && tls.cert === undefined)
        ? grpc.credentials.createInsecure()
        : grpc.credentials.createSsl(
            tls.ca === undefined ? null : readFileSync(tls.ca),
            tls.key === undefined ? null : readFileSync(tls.key),
            tls.cert === undefined ? null : readFileSync(tls.cert),
          );
    this.#client = new grpc.Client(
      address,
      creds,
      tls?.serverName === undefined ? {} : { "grpc.ssl_target_name_override": tls.serverName },
    );
  }

  #unary<Req, Res>(
    def: { path: string; requestSerialize: unknown; responseDeserialize: unknown },
    req: Req,
    timeoutMs: number,
  ): Promise<Res> {
    return new Promise((resolve, reject) => {
      this.#client.makeUnaryRequest(
        def.path,
        def.requestSerialize as (v: Req) => Buffer,
        def.responseDeserialize as (b: Buffer) => Res,
        req,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, reply?: Res) => {
          if (err) reject(err);
          else if (reply === undefined) reject(new Error("empty reply"));
          else resolve(reply);
        },
      );
    });
  }

  status(timeoutMs = 5_000): Promise<WireStatusReply> {
    const def = nodeStatusService().Status!;
    return this.#unary<Record<string, never>, WireStatusReply>(def, {}, timeoutMs);
  }

  /** Runs `Coordinate` with a gRPC deadline of `deadlineMs` from now. */
  async coordinate(call: CoordinateCall, deadlineMs: number): Promise<CoordinateAnswer> {
    const req: WireCoordinateRequest = {
      kind: call.kind,
      payload: encodeJson(call.payload, "payload"),
      required: call.required ?? 0,
      policy: call.policy ?? "",
      budgetMs: 0,
      decision: call.decision ?? "",
      options: encodeJson(call.options, "options"),
    };
    const reply = await this.#unary<WireCoordinateRequest, WireCoordinateReply>(
      swarmService().Coordinate,
      req,
      deadlineMs,
    );
    return { ...reply, action: decodeJson(reply.action, "action") };
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
    return this.#unary<string, string>(
      { path, requestSerialize: encode, responseDeserialize: decode },
      service,
      timeoutMs,
    );
  }

  close(): void {
    this.#client.close();
  }
}
