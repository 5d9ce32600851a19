/**
 * One probe: a unary call on the channel's own call path, resolving to its reply or its status.
 * Not through `Client.makeUnaryRequest`, which captures an `Error` per call for the caller's stack
 * and, on a failure, formats it into a `ServiceError`: a probe's outcome is its code, and at hundreds
 * of nodes a process with peers suspected or down spent a share of its CPU on those stacks.
 */
import { Metadata, status } from "@grpc/grpc-js";
import type { Client } from "@grpc/grpc-js";
import type { UnaryMethod } from "../unary-call.js";

export type ProbeResult<Res> =
  | { readonly ok: true; readonly reply: Res }
  | { readonly ok: false; readonly code: status; readonly details: string };

export function probeCall<Req, Res>(
  client: Client,
  method: UnaryMethod,
  request: Req,
  timeoutMs: number,
): Promise<ProbeResult<Res>> {
  const serialize = method.requestSerialize as (v: Req) => Buffer;
  const deserialize = method.responseDeserialize as (b: Buffer) => Res;
  return new Promise((resolve) => {
    const call = client.getChannel().createCall(method.path, Date.now() + timeoutMs, null, null, null);
    let message: Buffer | undefined;
    call.start(new Metadata(), {
      onReceiveMetadata() {},
      onReceiveMessage(m: Buffer) {
        message = m;
      },
      onReceiveStatus(s) {
        if (s.code !== status.OK) return resolve({ ok: false, code: s.code, details: s.details });
        if (message === undefined)
          return resolve({ ok: false, code: status.INTERNAL, details: "empty reply" });
        try {
          resolve({ ok: true, reply: deserialize(message) });
        } catch (error) {
          resolve({ ok: false, code: status.INTERNAL, details: `bad reply: ${String(error)}` });
        }
      },
    });
    call.sendMessageWithContext({}, serialize(request));
    call.halfClose();
    call.startRead();
  });
}
