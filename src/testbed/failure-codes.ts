/**
 * Why calls failed at the caller (mode `error` in the report): the gRPC status names, counted per
 * policy and coordinator. A failed call has no decision within the budget; the caller falls back to
 * its prior, and the value model charges it a miss.
 */
import type { CallRecord } from "./records.js";

/** policy → coordinator → status name → failed calls. */
export type FailureCodes = Record<string, Record<string, Record<string, number>>>;

export function failureCodes(calls: readonly CallRecord[]): FailureCodes {
  const out: FailureCodes = {};
  for (const c of calls) {
    if (c.ok) continue;
    const byCoord = (out[c.policy] ??= {});
    const codes = (byCoord[c.coordinator] ??= {});
    const code = c.code ?? "UNKNOWN";
    codes[code] = (codes[code] ?? 0) + 1;
  }
  return out;
}
