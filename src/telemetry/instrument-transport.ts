/**
 * Wraps a `PeerTransport` so that each branch is sent inside its branch span (the span is the active
 * context while the transport sends, so the mesh's `propagation.inject(context.active(), metadata)`
 * carries it to the peer) and counts branches in flight.
 */
import { context } from "@opentelemetry/api";
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
  // Built once, so that per branch the only allocations are the span, its context and (with metrics)
  // one derived promise: `send` is bound here because the AsyncLocalStorage context manager binds a
  // fresh function on every `context.with` that is given a `this`; and `then` with two prebuilt
  // handlers makes one promise where `finally` makes three.
  const send = inner.branch.bind(inner);
  const settled = (r: BranchResult): BranchResult => {
    metrics!.branchSettled();
    return r;
  };
  const failed = (err: unknown): never => {
    metrics!.branchSettled();
    throw err;
  };
  return {
    branch(peer: PeerId, req: BranchRequest, opts: BranchCallOptions): Promise<BranchResult> {
      if (metrics === undefined) {
        return context.with(tracer!.startBranch(peer, req), send, undefined, peer, req, opts);
      }
      metrics.branchStarted();
      let p: Promise<BranchResult>;
      try {
        p =
          tracer === undefined
            ? send(peer, req, opts)
            : context.with(tracer.startBranch(peer, req), send, undefined, peer, req, opts);
      } catch (err) {
        metrics.branchSettled();
        throw err;
      }
      return p.then(settled, failed);
    },
  };
}
