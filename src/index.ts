// The public surface of the tailswarm library: explicit named exports only (no `export *`).
export { TailswarmError } from "./errors.js";
export type { TailswarmErrorCode } from "./errors.js";
export { systemClock, sleep } from "./clock/clock.js";
export type { Clock, TimerHandle } from "./clock/clock.js";
export type {
  PeerId,
  EstimatorOptions,
  PeerEstimate,
  FanoutEstimate,
  Requirement,
  InFlight,
  UnknownReason,
} from "./estimate/types.js";
export { LatencyBook } from "./estimate/latency-book.js";
export type { LatencyBookOptions } from "./estimate/options.js";
export { PeerLatency } from "./estimate/peer-latency.js";
export { WindowedHistogram } from "./estimate/windowed-histogram.js";
export { fanoutQuantile, fanoutQuantiles, fanoutCdfAt } from "./estimate/fanout.js";
export type { CdfLike } from "./estimate/fanout.js";
export type { Mode, Reason, Classification, PolicyName } from "./policy/types.js";
export { classify } from "./policy/classify.js";
export { decide } from "./policy/decide.js";
export type { DecideInput } from "./policy/decide.js";
export { isPolicyName, POLICY_NAMES } from "./policy/types.js";
export { REASONS } from "./policy/reasons.js";
export { describeClassification } from "./policy/describe.js";
export type { ClassificationAccount } from "./policy/describe.js";
export { SpeculationBudgetViolation } from "./policy/violation.js";
export type { ViolationKind } from "./policy/violation.js";
export type { DecisionModel, RelevanceScore } from "./decision/types.js";
export { quorumVote } from "./decision/quorum-vote.js";
export type { QuorumVoteOptions, VoteAnswer } from "./decision/quorum-vote.js";
export { argmaxScores } from "./decision/argmax-scores.js";
export type { ArgmaxScoresOptions, ScoresAnswer } from "./decision/argmax-scores.js";
export { predicateModel } from "./decision/predicate-model.js";
export type { PredicateModelOptions } from "./decision/predicate-model.js";
export { scoreRelevance, decisionRelevantRate } from "./decision/score-relevance.js";
export type {
  Task,
  BranchRequest,
  BranchResult,
  BranchCallOptions,
  PeerTransport,
} from "./engine/transport.js";
export type { BranchOutcome, BranchRecord, FanoutOutcome, FanoutObserver } from "./engine/outcome.js";
export { Coordinator } from "./engine/coordinator.js";
export type { CoordinatorOptions, CoordinatorStats } from "./engine/coordinator.js";
export type { FanoutOptions } from "./engine/options.js";
export type { FanoutRouter, FanoutRouteContext, RouteChoice } from "./engine/fanout-router.js";
export type { LatencySource } from "./estimate/latency-source.js";
export { AbandonLedger } from "./engine/abandon-ledger.js";
export type {
  AbandonLedgerOptions,
  AbandonLedgerStats,
  LedgerBranch,
  LedgerFanout,
  PeerLedgerStats,
} from "./engine/abandon-ledger.js";
export { MemoryTransport } from "./engine/memory-transport.js";
export type {
  DownMode,
  LatencySampler,
  MemoryPeerContext,
  MemoryPeerHandler,
  MemoryPeerOptions,
  MemoryPeerStats,
  MemoryTransportOptions,
} from "./engine/memory-transport.js";
export { SimClock } from "./clock/sim-clock.js";
export type { SimClockOptions } from "./clock/sim-clock.js";
export { createRouter, registerRoutingPolicy, ROUTING_POLICIES } from "./routing/router.js";
export type { RouterOptions, ScorerFactory } from "./routing/router.js";
export type {
  Router,
  PeerView,
  RouteTask,
  RouteContext,
  Commodity,
  RoutingPolicyName,
  SignatureLookup,
} from "./routing/types.js";
export type { Scorer, Candidate } from "./routing/scorer.js";
export { commodity, queueKey } from "./routing/commodity.js";
export { signatureOf, SignatureSet, NO_MEMORY, MAX_ADVERTISED_SIGNATURES } from "./routing/signature.js";
export { PrimitiveTable } from "./routing/primitives.js";
export type { Primitives, PrimitiveEntry, PrimitiveSpec, Successor } from "./routing/primitives.js";
export { LearnedPrimitives } from "./routing/learned-primitives.js";
export type { ObservedOutcome } from "./routing/learned-primitives.js";
export { explainMabp } from "./routing/policies/mabp.js";
export type { PressureBreakdown } from "./routing/pressure.js";
export { retain, marginalValue } from "./routing/retention.js";
export type { RetentionItem, RetentionPolicyName, RetentionOptions } from "./routing/retention.js";
export { DecayedCounts } from "./routing/reuse-stats.js";
// src/mesh: the gRPC peer mesh (wire contract tailswarm.v1, server, transport, membership).
export { HandlerRegistry } from "./mesh/handler.js";
export type { TaskHandler, HandlerContext } from "./mesh/handler.js";
export { createSwarmServer } from "./mesh/server.js";
export type { SwarmServer, SwarmServerOptions } from "./mesh/server.js";
export type { NodeState } from "./mesh/server-core.js";
export { fromFanoutOutcome } from "./mesh/coordinate.js";
export type {
  CoordinateFn,
  CoordinateRequest,
  CoordinateContext,
  CoordinateResult,
} from "./mesh/coordinate.js";
export { GrpcTransport } from "./mesh/grpc-transport.js";
export type { GrpcTransportOptions } from "./mesh/grpc-transport.js";
export { ChannelPool } from "./mesh/channel-pool.js";
export type { ChannelPoolOptions } from "./mesh/channel-pool.js";
export { incomingDeadline, workDeadline, chainAbort } from "./mesh/deadline.js";
export type { ChainedAbort } from "./mesh/deadline.js";
export { Membership } from "./mesh/membership/membership.js";
export type { MembershipOptions, PeerInfo, MembershipEvents } from "./mesh/membership/membership.js";
export { registerSource, parseTarget } from "./mesh/membership/source.js";
export type { MembershipSource, SourceFactory, ParsedTarget } from "./mesh/membership/source.js";
export { PROTO_ROOT, SWARM_PROTO_FILE, SWARM_SERVICE_NAME, swarmPackageDefinition } from "./mesh/proto.js";
// src/telemetry: spans, metrics and the flight recorder, through @opentelemetry/api only (a no-op
// until the application installs an SDK; the daemon's SDK set-up, src/telemetry/sdk, is not exported).
export { createTelemetry } from "./telemetry/telemetry.js";
export type { Telemetry, TelemetryOptions } from "./telemetry/telemetry.js";
export type { SamplingHints } from "./telemetry/sampling-hints.js";
export { FanoutTracer } from "./telemetry/fanout-tracer.js";
export type { FanoutTracerOptions } from "./telemetry/fanout-tracer.js";
export { FanoutMetrics, METRIC as TELEMETRY_METRICS } from "./telemetry/metrics.js";
export type { FanoutMetricsOptions } from "./telemetry/metrics.js";
export type { EstimateSource } from "./telemetry/peer-gauges.js";
export { FlightRecorder } from "./telemetry/flight-recorder.js";
export type { DecisionRecord, FlightRecorderOptions } from "./telemetry/flight-recorder.js";
export { combineObservers } from "./engine/combine-observers.js";
export { instrumentTransport } from "./telemetry/instrument-transport.js";
export type { InstrumentTransportOptions } from "./telemetry/instrument-transport.js";
export {
  ATTR as TELEMETRY_ATTRIBUTES,
  INSTRUMENTATION_SCOPE,
  SPAN_BRANCH,
  SPAN_FANOUT,
} from "./telemetry/attributes.js";
export { addDecisionsService, decisionsSource } from "./telemetry/decisions-service.js";
export type { DecisionsSource } from "./telemetry/decisions-service.js";
