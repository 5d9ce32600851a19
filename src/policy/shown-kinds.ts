/**
 * The kinds a decision shows beside its p50 and p99 — in the Coordinate reply, the fan-out span and the
 * flight recorder — so that all three say the same. An unknown estimate's quantiles show "unknown";
 * a p50 the classification reports in place of the estimate's (the fresh members' floor an unknown
 * estimate was degraded on, `freshMembersP50Ms`) shows the classification's kind, a lower bound.
 */
import type { FanoutEstimate, QuantileKind } from "../estimate/types.js";
import type { Classification } from "./types.js";

export type ShownKind = QuantileKind | "unknown";

export function shownKinds(
  c: Pick<Classification, "fanoutP50Ms" | "fanoutP50Kind">,
  e: Pick<FanoutEstimate, "status" | "p50Ms" | "p50Kind" | "p99Kind">,
): { readonly p50: ShownKind; readonly p99: ShownKind } {
  const of = (k: QuantileKind | undefined): ShownKind =>
    e.status === "unknown" ? "unknown" : (k ?? "known");
  const replaced = !Object.is(c.fanoutP50Ms, e.p50Ms);
  return { p50: replaced ? (c.fanoutP50Kind ?? "known") : of(e.p50Kind), p99: of(e.p99Kind) };
}
