/** The paper's published figures (the MABP paper, Table I and Section VI-B), printed beside ours. */

export interface PaperRow {
  readonly stable_load: number;
  readonly penalty: number;
  readonly p95_delay: number;
  readonly hit_ratio: number;
  readonly churn: number;
}

export const PAPER_TABLE1: Readonly<Record<string, PaperRow>> = Object.freeze({
  SP: { stable_load: 0.5, penalty: 3.86, p95_delay: 2249.03, hit_ratio: 0.05, churn: 0.06 },
  JSQ: { stable_load: 0.5, penalty: 3.85, p95_delay: 1688.81, hit_ratio: 0.06, churn: 0.05 },
  BP: { stable_load: 0.6, penalty: 3.86, p95_delay: 1295.9, hit_ratio: 0.06, churn: 0.06 },
  "Cost-BP": { stable_load: 0.6, penalty: 3.69, p95_delay: 1219.89, hit_ratio: 0.1, churn: 0.06 },
  "GreedyCache-BP": { stable_load: 0.7, penalty: 3.52, p95_delay: 932.02, hit_ratio: 0.32, churn: 0.07 },
  MABP: { stable_load: 0.9, penalty: 3.12, p95_delay: 129.13, hit_ratio: 0.43, churn: 0.04 },
});

/** Proposition 3 / Fig. 3: BP-minus-MABP one-step penalty gap ("near zero" at K = 1). */
export const PAPER_PROP3: Readonly<Record<string, number>> = Object.freeze({
  "1": 0,
  "4": 1.46,
  "8": 3.5,
  "16": 7.52,
});

/** Section VI-B: penalty gain of MABP over Cost-BP across β (10.2% → 17.6%) and skew (12.2% → 16.5%). */
export const PAPER_SWEEPS = Object.freeze({
  betaGainPercent: [10.2, 17.6],
  skewGainPercent: [12.2, 16.5],
  nuPenalty: [3.24, 3.02],
  nuBacklog: [209.4, 335.6],
});
