/**
 * What every RPC of a swarm server passes through, whatever service serves it (Swarm, health,
 * reflection, NodeStatus, Decisions):
 *
 * - a request that does not decode as its protobuf message, or a unary call that sends no message (or
 *   two), is INVALID_ARGUMENT naming the method and what was wrong (grpc-js says INTERNAL, or
 *   UNIMPLEMENTED "server streaming method");
 * - every status's details are bounded (`boundedDetails`), so no reply is as large as a request;
 * - `authorize`, when given, decides at the call's start and on each request message from the caller's
 *   certificate (./authz.ts).
 *
 * Admission control runs before all this, on the HTTP/2 headers (./header-admission.ts).
 *
 * grpc-js decodes requests before any interceptor sees them and answers a decode error itself, so the
 * server's decoders are wrapped (`GuardedServer.register`) to hand an undecodable request on as a
 * `MalformedRequest`, which the interceptor answers.
 */
import * as grpc from "@grpc/grpc-js";
type PartialStatusObject = Parameters<grpc.ServerInterceptingCallInterface["sendStatus"]>[0];
import type { HandleCall } from "@grpc/grpc-js/build/src/server-call.js";
import { clip } from "../errors.js";
import { boundedDetails } from "./status.js";

/** An undecodable request: what the wrapped decoder hands on instead of throwing. */
export class MalformedRequest {
  constructor(
    readonly bytes: number,
    readonly reason: string,
  ) {}
}

/** A grpc-js server whose request decoders never throw (see `MalformedRequest`). */
export class GuardedServer extends grpc.Server {
  override register<RequestType, ResponseType>(
    name: string,
    handler: HandleCall<RequestType, ResponseType>,
    serialize: grpc.serialize<ResponseType>,
    deserialize: grpc.deserialize<RequestType>,
    type: string,
  ): boolean {
    const guarded = (bytes: Buffer): RequestType => {
      try {
        return deserialize(bytes);
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        return new MalformedRequest(bytes.length, reason) as RequestType;
      }
    };
    return super.register<RequestType, ResponseType>(name, handler, serialize, guarded, type);
  }
}

/** What the authorizer sees of a call. */
export interface CallInfo {
  /** `/package.Service/Method`. */
  readonly path: string;
  readonly call: Pick<grpc.ServerInterceptingCallInterface, "getAuthContext">;
  /** Absent when asked at the call's start; then each decoded request message in turn. */
  readonly message?: unknown;
}

/** A call that may not proceed: its status, details and trailers. */
export interface Refusal {
  readonly code: grpc.status;
  readonly details: string;
  readonly metadata?: grpc.Metadata;
}

/** Returns a refusal for a call that may not proceed, or undefined. */
export type Authorize = (info: CallInfo) => Refusal | undefined;

/** grpc-js's own texts for a unary call with no request message, or with two. */
const MISSING_MESSAGE = /^Received (no|a second) request message for (\w+ streaming|unary) method/;

function bounded(status: PartialStatusObject, path: string): PartialStatusObject {
  const details = status.details ?? "";
  const missing = status.code === grpc.status.UNIMPLEMENTED ? MISSING_MESSAGE.exec(details) : null;
  if (missing !== null) {
    return {
      ...status,
      code: grpc.status.INVALID_ARGUMENT,
      details: `request (${path}): got ${missing[1] === "no" ? "no message" : "a second message"}, expected exactly one`,
    };
  }
  return details.length > 0 ? { ...status, details: boundedDetails(details) } : status;
}

/** The interceptor of every call: malformed requests, bounded details, authorization. */
export function rpcGuard(guards: { authorize?: Authorize } = {}): grpc.ServerInterceptor {
  const { authorize } = guards;
  return (method, call) => {
    const path = method.path;
    const refuse = (r: Refusal): void =>
      call.sendStatus({
        code: r.code,
        details: boundedDetails(r.details),
        metadata: r.metadata ?? new grpc.Metadata(),
      });
    let refused = false;
    return new grpc.ServerInterceptingCall(call, {
      start(next) {
        const denial = authorize?.({ path, call });
        if (denial !== undefined) refused = true;
        next({
          onReceiveMetadata(metadata, nextMetadata) {
            if (denial !== undefined) refuse(denial);
            else nextMetadata(metadata);
          },
          onReceiveMessage(message, nextMessage) {
            if (refused) return;
            if (message instanceof MalformedRequest) {
              refused = true;
              refuse({
                code: grpc.status.INVALID_ARGUMENT,
                details: `request (${path}): got ${message.bytes} bytes that do not decode (${clip(message.reason)}), expected a protobuf message of the method's request type`,
              });
              return;
            }
            const late = authorize?.({ path, call, message });
            if (late !== undefined) {
              refused = true;
              refuse(late);
              return;
            }
            nextMessage(message);
          },
          onReceiveHalfClose(nextHalfClose) {
            if (!refused) nextHalfClose();
          },
        });
      },
      sendStatus(status, next) {
        next(bounded(status, path));
      },
    });
  };
}
