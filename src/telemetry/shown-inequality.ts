/**
 * The inequality that decided a fan-out, with its numbers rounded for a person: to 0.1 ms, or finer
 * where 0.1 ms would make two different numbers look equal (so `budget 90.04 > p99 90.01` never
 * reads `90 > 90`). What `tailswarm decisions` prints after `because`.
 */
import { describeClassification } from "../policy/describe.js";
import type { Classification } from "../policy/types.js";

const round = (v: number, digits: number): number => (Number.isFinite(v) ? Number(v.toFixed(digits)) : v);

export function shownInequality(c: Classification): string {
  const tail = c.fanoutP99Ms + c.abandonCostMs;
  const floor = c.p50FloorMs ?? NaN;
  const raw = [c.budgetMs, c.fanoutP50Ms, c.fanoutP99Ms, c.abandonCostMs, tail, floor].filter(
    Number.isFinite,
  );
  const distinct = new Set(raw).size;
  const digits = [1, 2, 3, 6].find((d) => new Set(raw.map((v) => round(v, d))).size === distinct) ?? 6;
  const shown: Classification = {
    ...c,
    budgetMs: round(c.budgetMs, digits),
    fanoutP50Ms: round(c.fanoutP50Ms, digits),
    fanoutP99Ms: round(c.fanoutP99Ms, digits),
    abandonCostMs: round(c.abandonCostMs, digits),
    ...(c.p50FloorMs !== undefined && { p50FloorMs: round(c.p50FloorMs, digits) }),
  };
  // A sum of rounded numbers can carry binary noise (0.1 + 0.2): shown at the same precision. A
  // number the estimate did not have reads "unknown", not NaN.
  return describeClassification(shown)
    .inequality.replace(/\d+\.\d{7,}/g, (m) => String(round(Number(m), digits)))
    .replace(/\bNaN\b/g, "unknown");
}
