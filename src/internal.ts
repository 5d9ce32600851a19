/**
 * `tailswarm/internal`: the parts behind the public surface (src/index.ts), for tools, custom
 * transports and experiments that need them.
 *
 * @private Not covered by semver: any name here may change or go in any release, minor and patch
 * included. Depend on "tailswarm" where you can.
 */

// Time
export { sleep } from "./clock/clock.js";
export type { TimerHandle } from "./clock/clock.js";
export type { SimClockOptions } from "./clock/sim-clock.js";

// Latency estimates
export type { EstimatorOptions, InFlight, UnknownReason } from "./estimate/types.js";
export { PeerLatency } from "./estimate/peer-latency.js";
export { WindowedHistogram } from "./estimate/windowed-histogram.js";
export { fanoutQuantile, fanoutQuantiles, fanoutCdfAt } from "./estimate/fanout.js";
export type { CdfLike } from "./estimate/fanout.js";

// The rule
export { isPolicyName, POLICY_NAMES } from "./policy/types.js";
export { REASONS } from "./policy/reasons.js";
export { describeClassification } from "./policy/describe.js";
export type { ClassificationAccount } from "./policy/describe.js";
export type { ViolationKind } from "./policy/violation.js";

// Decision models
export type { RelevanceScore } from "./decision/types.js";
export type { QuorumVoteOptions } from "./decision/quorum-vote.js";
export type { ArgmaxScoresOptions } from "./decision/argmax-scores.js";
export type { PredicateModelOptions } from "./decision/predicate-model.js";
export { scoreRelevance, decisionRelevantRate } from "./decision/score-relevance.js";

// The coordinator
export type { CoordinatorStats } from "./engine/coordinator.js";
export type { HorizonProbeOptions, HorizonProbeStats } from "./engine/horizon-probes.js";
export type { BranchOutcome } from "./engine/outcome.js";
export type { LatencySource } from "./estimate/latency-source.js";
export type { FanoutRouteContext } from "./engine/fanout-router.js";
export type {
  AbandonLedgerOptions,
  AbandonLedgerStats,
  LedgerBranch,
  LedgerFanout,
  PeerLedgerStats,
} from "./engine/abandon-ledger.js";
export type {
  DownMode,
  LatencySampler,
  MemoryPeerContext,
  MemoryPeerHandler,
  MemoryPeerOptions,
  MemoryPeerStats,
  MemoryTransportOptions,
} from "./engine/memory-transport.js";

// Routing (memory-augmented backpressure) and its adapter to the coordinator's `router` option
export { RouteAdapter } from "./engine/route-adapter.js";
export type { RouteAdapterOptions, RouteExplanation } from "./engine/route-adapter.js";
export { PeerViewBook } from "./routing/peer-view-book.js";
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

// The gRPC mesh (wire contract tailswarm.v1, server, membership)
export type { NodeState } from "./mesh/server-core.js";
export { fromFanoutOutcome } from "./mesh/coordinate.js";
export type {
  CoordinateFn,
  CoordinateRequest,
  CoordinateContext,
  CoordinateResult,
} from "./mesh/coordinate.js";
export { ChannelPool } from "./mesh/channel-pool.js";
export type { ChannelPoolOptions } from "./mesh/channel-pool.js";
export { incomingDeadline, workDeadline, chainAbort } from "./mesh/deadline.js";
export type { ChainedAbort } from "./mesh/deadline.js";
export { Membership } from "./mesh/membership/membership.js";
export type { MembershipOptions, PeerInfo, MembershipEvents } from "./mesh/membership/membership.js";
export { registerSource, parseTarget } from "./mesh/membership/source.js";
export type { MembershipSource, SourceFactory, ParsedTarget } from "./mesh/membership/source.js";
export { PROTO_ROOT, SWARM_PROTO_FILE, SWARM_SERVICE_NAME, swarmPackageDefinition } from "./mesh/proto.js";

// Replicated fan-outs and hedging (docs/hedging.md)
export { HedgedFanout } from "./engine/hedge-fanout.js";
export type { HedgeBook, HedgedFanoutOptions, ReplicatedRun } from "./engine/hedge-fanout.js";
export type {
  BackupRecord,
  HedgeDecisionRecord,
  HedgedOutcome,
  HedgedSettlement,
  HedgeObserver,
  HedgeStats,
} from "./engine/hedge-outcome.js";
export { decideBackup, canLand } from "./hedge/decide-backup.js";
export { checkHedgePolicy } from "./hedge/check-policy.js";
export { tailGainSchedule, quantileOf } from "./hedge/expected-gain.js";
export type { TailGainSchedule } from "./hedge/expected-gain.js";
export { ExtraLoadCeiling } from "./hedge/extra-load-ceiling.js";
export type { ExtraLoadCeilingOptions } from "./hedge/extra-load-ceiling.js";
export { HEDGE_DEFAULTS, HEDGE_RANGES } from "./hedge/options.js";
export type { HedgeOptions } from "./hedge/options.js";
export { HEDGE_REASONS } from "./hedge/reasons.js";
export type { HedgeReasonSpec } from "./hedge/reasons.js";
export { HEDGE_POLICY_NAMES } from "./hedge/types.js";
export type {
  HedgeAction,
  HedgeDecision,
  HedgeInput,
  HedgeNumbers,
  HedgePolicy,
  HedgePolicyName,
  HedgeReason,
} from "./hedge/types.js";

// Telemetry parts, for custom wiring
export type { SamplingHints } from "./telemetry/sampling-hints.js";
export { FanoutTracer } from "./telemetry/fanout-tracer.js";
export { HedgeTelemetry } from "./telemetry/hedge-metrics.js";
export type { HedgeTelemetryOptions } from "./telemetry/hedge-metrics.js";
export type { FanoutTracerOptions } from "./telemetry/fanout-tracer.js";
export { FanoutMetrics, METRIC as TELEMETRY_METRICS } from "./telemetry/metrics.js";
export type { FanoutMetricsOptions } from "./telemetry/metrics.js";
export type { EstimateSource } from "./telemetry/peer-gauges.js";
export type { FlightRecorderOptions } from "./telemetry/flight-recorder.js";
export { instrumentTransport } from "./telemetry/instrument-transport.js";
export type { InstrumentTransportOptions } from "./telemetry/instrument-transport.js";
export {
  ATTR as TELEMETRY_ATTRIBUTES,
  INSTRUMENTATION_SCOPE,
  SPAN_BRANCH,
  SPAN_FANOUT,
} from "./telemetry/attributes.js";
export { ROUTE_ATTR, ROUTE_METRIC } from "./telemetry/routing-telemetry.js";
export type { RoutingTelemetrySource } from "./telemetry/routing-telemetry.js";
export { addDecisionsService, decisionsSource } from "./telemetry/decisions-service.js";
export type { DecisionsSource } from "./telemetry/decisions-service.js";

// The node
export type { TelemetrySetup, TelemetryContext, TelemetryHandle } from "./node/node.js";
