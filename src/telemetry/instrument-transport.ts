/**
 * Wraps a `PeerTransport` so that each branch is sent in its branch span's context — given to the
 * transport as `traceContext`, which the mesh writes into the call's metadata — and counts branches in
 * flight. No context is entered per branch: under the AsyncLocalStorage context manager that copies
 * its store twice per call.
 */
import type { PeerId } from "../estimate/types.js";
import type { BranchCallOptions, BranchRequest, BranchResult, PeerTransport } from "../engine/transport.js";
import type { FanoutTracer } from "./fanout-tracer.js";
import type { FanoutMetrics } from "./metrics.js";

export interface InstrumentTransportOptions {
  readonly tracer?: FanoutTracer;
  readonly metrics?: FanoutMetrics;
}

/**
 * @example
 * const transport = instrumentTransport(new GrpcTransport(...), { tracer, metrics });
 */
export function instrumentTransport(
  inner: PeerTransport,
  options: InstrumentTransportOptions,
): PeerTransport {
  const { tracer, metrics } = options;
  if (tracer === undefined && metrics === undefined) return inner;
  // Built once, so that per branch the only allocations are the options (and, for a traced branch, its
  // span and context) and with metrics one derived promise: `then` with two prebuilt handlers makes one
  // promise where `finally` makes three. The branches of an unsampled fan-out share its context, so the
  // mesh formats their `traceparent` once (src/mesh/trace.ts).
  const send = (peer: PeerId, req: BranchRequest, opts: BranchCallOptions): Promise<BranchResult> =>
    inner.branch(
      peer,
      req,
      tracer === undefined ? opts : { ...opts, traceContext: tracer.startBranch(peer, req) },
    );
  const settled = (r: BranchResult): BranchResult => {
    metrics!.branchSettled();
    return r;
  };
  const failed = (err: unknown): never => {
    metrics!.branchSettled();
    throw err;
  };
  if (metrics === undefined) return { branch: send };
  return {
    branch(peer: PeerId, req: BranchRequest, opts: BranchCallOptions): Promise<BranchResult> {
      metrics.branchStarted();
      let p: Promise<BranchResult>;
      try {
        p = send(peer, req, opts);
      } catch (err) {
        metrics.branchSettled();
        throw err;
      }
      return p.then(settled, failed);
    },
  };
}
