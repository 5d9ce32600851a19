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
export type { Mode, Reason, Classification, PolicyName } from "./policy/types.js";
export type { DecisionModel, RelevanceScore } from "./decision/types.js";
export type {
  Task,
  BranchRequest,
  BranchResult,
  BranchCallOptions,
  PeerTransport,
} from "./engine/transport.js";
