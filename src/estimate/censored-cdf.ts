import type { PiecewiseCdf } from "./piecewise-cdf.js";
import type { WindowCounts } from "./windowed-histogram.js";

/** The histogram's floor, 1 µs: no latency is placed below it. */
const MIN_MS = 0.001;

/**
 * Builds a peer's latency CDF from the window's completed samples and the calls still in flight, treating
 * each in-flight call as a right-censored observation: its latency is known only to exceed its current age.
 *
 * The estimator is Kaplan–Meier over HDR buckets (equivalently Efron's "redistribute to the right"):
 * walking the buckets upwards, a censored call is in the risk set for every bucket at or below its age and
 * leaves it afterwards, so its probability mass is shared among the longer latencies that remain possible.
 * Calls still in flight beyond the last completed bucket keep their mass as a point at their age (a lower
 * bound: the tail is *at least* this long now).
 *
 * Why this and not "treat the age as a sample": a call that started 1 ms ago would then count as a 1 ms
 * sample and pull every quantile down, which a lower bound must never do. Kaplan–Meier never lowers a
 * quantile: adding a censored observation at age c raises the risk set n_j of every bucket at or below c, so
 * each survival factor (1 − d_j / n_j) grows or stays, and S(t) = Π (1 − d_j / n_j) grows or stays for every
 * t (ties at HDR resolution are resolved events-first, which keeps the argument). Hence every quantile with
 * the in-flight calls is >= the quantile of the completed samples alone. It also removes the bias of a
 * completed-only window during a slowdown (the slow calls have not completed yet, so the window holds only
 * the fast ones), and a stall shows immediately: k calls pending for 300 ms among n recent completions put
 * at least k / (n + k) of the mass at >= 300 ms, so p99 reaches 300 ms once k / (n + k) > 1 %.
 * It assumes censoring independent of latency, which holds here: calls are censored by "now", not by speed.
 *
 * Within a bucket the mass is spread uniformly over the bucket's value range (HDR resolution, 1 %).
 *
 * @param samples the window's completed samples (HDR counts, µs)
 * @param censoredMs ages of the calls in flight, ms, sorted ascending (first `censoredCount` entries)
 * @param out filled with the knots of the CDF (ms); left empty when there is nothing
 */
export function buildCensoredCdf(
  samples: WindowCounts,
  censoredMs: Float64Array,
  censoredCount: number,
  out: PiecewiseCdf,
): void {
  out.clear();
  const m = censoredCount;
  if (samples.total === 0 && m === 0) return;
  const { histogram, table } = samples;
  const lowUs = table.lowUs;
  const widthUs = table.widthUs;
  let atRisk = samples.total + m;
  let survival = 1;
  let j = 0;
  for (let k = samples.lo; k <= samples.hi; k++) {
    const d = histogram.getCountAtIndex(k);
    if (d === 0) continue;
    const low = lowUs[k] as number;
    const loMs = low / 1000;
    while (j < m && (censoredMs[j] as number) < loMs) {
      atRisk--;
      j++;
    }
    const before = 1 - survival;
    survival = atRisk > d ? survival * (1 - d / atRisk) : 0;
    atRisk -= d;
    out.push(loMs, before);
    out.push((low + (widthUs[k] as number)) / 1000, 1 - survival);
  }
  const remaining = m - j;
  if (remaining > 0 && survival > 0) {
    const share = survival / remaining;
    let mass = 1 - survival;
    for (; j < m; j++) {
      const x = Math.max(censoredMs[j] as number, MIN_MS);
      out.push(x, mass);
      mass += share;
      out.push(x, mass);
    }
  }
  // pin the top at exactly 1 against rounding
  if (out.length > 0) out.f[out.length - 1] = 1;
}
