/**
 * One unary gRPC call as a promise, for the callers that wait for its reply (membership probes, the
 * node client): the deadline is `timeoutMs` from now, and the promise rejects with the call's
 * `ServiceError`, or with "empty reply" when the call ends with neither.
 */
import { Metadata } from "@grpc/grpc-js";
import type { Client } from "@grpc/grpc-js";

/** The parts of a method definition a call needs (a `swarmService()` entry, or one written by hand). */
export interface UnaryMethod {
  readonly path: string;
  readonly requestSerialize: unknown;
  readonly responseDeserialize: unknown;
}

export function unaryCall<Req, Res>(
  client: Client,
  method: UnaryMethod,
  request: Req,
  timeoutMs: number,
): Promise<Res> {
  return new Promise((resolve, reject) => {
    client.makeUnaryRequest(
      method.path,
      method.requestSerialize as (v: Req) => Buffer,
      method.responseDeserialize as (b: Buffer) => Res,
      request,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (error, reply) => {
        if (error) reject(error);
        else if (reply === undefined) reject(new Error("empty reply"));
        else resolve(reply);
      },
    );
  });
}
