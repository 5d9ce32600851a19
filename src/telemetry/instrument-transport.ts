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
  return {
    branch(peer: PeerId, req: BranchRequest, opts: BranchCallOptions): Promise<BranchResult> {
      const send = (): Promise<BranchResult> => inner.branch(peer, req, opts);
      if (metrics === undefined) return context.with(tracer!.startBranch(peer, req), send);
      metrics.branchStarted();
      let p: Promise<BranchResult>;
      try {
        p = tracer === undefined ? send() : context.with(tracer.startBranch(peer, req), send);
      } catch (err) {
        metrics.branchSettled();
        throw err;
      }
      return p.finally(() => metrics.branchSettled());
    },
  };
}
