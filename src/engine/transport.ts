/**
 * The whole transport contract of the engine (like connect-es's Transport): one method to run a branch
 * on a peer. src/mesh implements it over gRPC; src/engine/memory-transport.ts implements it in memory
 * on a Clock for tests and the simulated testbed.
 */
import type { Context } from "@opentelemetry/api";
import type { PeerId } from "../estimate/types.js";

export interface Task {
  /** The workload that serves it on the peer (`vote`, `synthetic`, `echo`, or a user handler). */
  readonly kind: string;
  /** JSON-serialisable payload. */
  readonly payload: unknown;
}

export interface BranchRequest {
  readonly fanoutId: string;
  readonly branchId: string;
  readonly task: Task;
  /** Node id of the coordinator that issued it. */
  readonly origin: string;
  /** Hops already taken (0 for a branch issued by the first coordinator). */
  readonly hop: number;
  /** Absolute deadline, epoch ms on the shared clock. The peer stops work at this time. */
  readonly deadline: number;
}

/** How one branch ended, as the transport saw it. */
export type BranchResult =
  | {
      readonly kind: "answer";
      readonly answer: unknown;
      /** Peer-side time spent serving and queueing, ms (as reported by the peer). */
      readonly serviceMs: number;
      readonly queueMs: number;
    }
  /** Abandoned by the coordinator (the signal aborted): the peer's work lost before it stopped, ms. */
  | { readonly kind: "abandoned"; readonly lostWorkMs: number }
  /** The deadline passed before an answer. */
  | { readonly kind: "deadline"; readonly lostWorkMs: number }
  /** Failed without a latency to learn from (unreachable, refused, bad answer, peer error). */
  | { readonly kind: "failed"; readonly code: string; readonly message: string };

export interface BranchCallOptions {
  /**
   * Abort to abandon the branch. The transport must then stop the peer's work and still settle the
   * promise — with `abandoned` and the real lost work when the peer reports it. The engine shares one
   * signal among the branches of a fan-out (an AbortSignal is costly in Node 20): a transport must not
   * assume a signal per branch, and must settle every branch still out on it when it aborts.
   */
  readonly signal: AbortSignal;
  /**
   * The trace context to send the branch in (its branch span when traced), which the transport
   * propagates to the peer. Default: the active context. Telemetry's `instrumentTransport` sets it, so
   * that no context is entered per branch; a wrapper passes it on unchanged.
   */
  readonly traceContext?: Context;
}

export interface PeerTransport {
  /** Never rejects: every end is a BranchResult. Settles by `req.deadline` (plus the transport's grace). */
  branch(peer: PeerId, req: BranchRequest, options: BranchCallOptions): Promise<BranchResult>;
}
