/**
 * The value model of docs/value-model.md, the same for every policy. Per fan-out:
 *
 *   value = correct · [action = truth]
 *         − latencyPerMs · completionMs          (request → end of the coordinator's continuation)
 *         − abandonPerMs · (thrownMs + peerWorkCutMs + peerWorkRedundantMs)
 *         − miss · [no decision within the budget]
 *
 * What speculation buys is inside completionMs (the overlapped continuation is subtracted); what it
 * costs when abandoned is thrownMs (the continuation discarded). Peer work is wasted when it was cut
 * off or redundant (ended after the decision was settled), charged the same whatever the mode: a
 * synchronous fan-out that lets decided-out branches finish pays for them as a speculation that
 * cancels them does.
 */
import type { ScoredCall } from "./score-call.js";
import type { ValueModelSpec, ValueWeights } from "./scenario-types.js";

export function netValue(c: ScoredCall, w: ValueWeights): number {
  return (
    (c.correct ? w.correct : 0) -
    w.latencyPerMs * c.completionMs -
    w.abandonPerMs * (c.thrownMs + c.peerWorkCutMs + c.peerWorkRedundantMs) -
    (c.miss ? w.miss : 0)
  );
}

export function meanNetValue(calls: readonly ScoredCall[], w: ValueWeights): number {
  if (calls.length === 0) return 0;
  let sum = 0;
  for (const c of calls) sum += netValue(c, w);
  return sum / calls.length;
}

/** Every combination of the grid's values, in a stable order. */
export function weightGrid(spec: ValueModelSpec): ValueWeights[] {
  const out: ValueWeights[] = [];
  for (const correct of spec.grid.correct)
    for (const latencyPerMs of spec.grid.latencyPerMs)
      for (const abandonPerMs of spec.grid.abandonPerMs)
        for (const miss of spec.grid.miss) out.push({ correct, latencyPerMs, abandonPerMs, miss });
  return out;
}

export interface SensitivityRow {
  readonly weights: ValueWeights;
  readonly net_value_per_fanout: Record<string, number>;
  /** Policies with the highest net value at these weights. */
  readonly best: string[];
}

export function sensitivity(
  byPolicy: ReadonlyMap<string, readonly ScoredCall[]>,
  spec: ValueModelSpec,
): SensitivityRow[] {
  return weightGrid(spec).map((weights) => {
    const values: Record<string, number> = {};
    for (const [policy, calls] of byPolicy) values[policy] = round(meanNetValue(calls, weights), 3);
    const top = Math.max(...Object.values(values));
    return {
      weights,
      net_value_per_fanout: values,
      best: Object.keys(values).filter((p) => values[p] === top),
    };
  });
}

export function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
