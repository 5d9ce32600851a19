// The public surface of the tailswarm library: what an embedding application uses, covered by semver.
// Explicit named exports only (no `export *`). The parts behind these are in "tailswarm/internal"
// (src/internal.ts), which semver does not cover. test/public-api.test.ts uses every name below, and
// `npm run lint` (scripts/check-surface.mjs) fails on a name that no test of the public API or docs
// example uses, and on more than 60 names.

// Errors
export { TailswarmError } from "./errors.js";
export type { TailswarmErrorCode } from "./errors.js";
export { SpeculationBudgetViolation } from "./policy/violation.js";

// Time
export { systemClock } from "./clock/clock.js";
export type { Clock } from "./clock/clock.js";
export { SimClock } from "./clock/sim-clock.js";

// Latency estimates
export { LatencyBook } from "./estimate/latency-book.js";
export type { LatencyBookOptions } from "./estimate/options.js";
export type { PeerId, PeerEstimate, FanoutEstimate, Requirement } from "./estimate/types.js";

// The rule: speculate, synchronous or degrade
export { classify } from "./policy/classify.js";
export { decide } from "./policy/decide.js";
export type { DecideInput } from "./policy/decide.js";
export type { Mode, Reason, Classification, PolicyName } from "./policy/types.js";

// Decision models
export type { DecisionModel } from "./decision/types.js";
export { quorumVote } from "./decision/quorum-vote.js";
export type { VoteAnswer } from "./decision/quorum-vote.js";
export { argmaxScores } from "./decision/argmax-scores.js";
export type { ScoresAnswer } from "./decision/argmax-scores.js";
export { predicateModel } from "./decision/predicate-model.js";

// The coordinator
export { Coordinator } from "./engine/coordinator.js";
export type { CoordinatorOptions } from "./engine/coordinator.js";
export type { FanoutOptions } from "./engine/options.js";
export type { FanoutRouter, RouteChoice } from "./engine/fanout-router.js";
export type { FanoutOutcome, BranchRecord, FanoutObserver } from "./engine/outcome.js";
export { combineObservers } from "./engine/combine-observers.js";
export { AbandonLedger } from "./engine/abandon-ledger.js";

// Transports
export type {
  Task,
  PeerTransport,
  BranchRequest,
  BranchResult,
  BranchCallOptions,
} from "./engine/transport.js";
export { MemoryTransport } from "./engine/memory-transport.js";
export { GrpcTransport } from "./mesh/grpc-transport.js";
export type { GrpcTransportOptions } from "./mesh/grpc-transport.js";

// Serving tasks over gRPC
export { createSwarmServer } from "./mesh/server.js";
export type { SwarmServer, SwarmServerOptions } from "./mesh/server.js";
export { HandlerRegistry } from "./mesh/handler.js";
export type { TaskHandler, HandlerContext } from "./mesh/handler.js";

// The node and its client
export { SwarmNode } from "./node/node.js";
export type { SwarmNodeOptions } from "./node/node.js";
export { loadConfig } from "./node/config/load-config.js";
export type { NodeConfig } from "./node/config/types.js";
export { NodeClient } from "./node/client.js";

// Telemetry, through @opentelemetry/api only (a no-op until the application installs an SDK)
export { createTelemetry } from "./telemetry/telemetry.js";
export type { Telemetry, TelemetryOptions } from "./telemetry/telemetry.js";
export { FlightRecorder } from "./telemetry/flight-recorder.js";
export type { DecisionRecord } from "./telemetry/flight-recorder.js";
