/**
 * The kinds a decision shows beside its p50 and p99 — in the Coordinate reply, the fan-out span and the
 * flight recorder — so that all three say the same. An unknown estimate's quantiles show "unknown",
 * except the p50 an unknown estimate was degraded on (`budget-at-or-below-p50`): that is its p50 floor,
 * a lower bound, and shows so, as the reason's text does.
 */
import type { FanoutEstimate, QuantileKind } from "../estimate/types.js";
import type { Classification } from "./types.js";

/** What a fan-out quantile is, as the reply, spans, the flight recorder and `tailswarm decisions` show it. */
export type EstimateKind = QuantileKind | "unknown";

export function shownKinds(
  c: Pick<Classification, "reason" | "fanoutP50Kind">,
  e: Pick<FanoutEstimate, "status" | "p50Kind" | "p99Kind">,
): { readonly p50: EstimateKind; readonly p99: EstimateKind } {
  const of = (k: QuantileKind | undefined): EstimateKind =>
    e.status === "unknown" ? "unknown" : (k ?? "known");
  const degradedOnBound = c.reason === "budget-at-or-below-p50" && c.fanoutP50Kind === "lower-bound";
  return { p50: degradedOnBound ? "lower-bound" : of(e.p50Kind), p99: of(e.p99Kind) };
}
