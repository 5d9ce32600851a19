/**
 * The information measure behind `informationBits` of the built-in models.
 *
 * Model: the coordinator's belief over the options is a Dirichlet over option shares. Before any
 * answer it holds one pseudo-vote per option plus one extra pseudo-vote for its local prior (so the
 * prior is its best guess, held weakly). Every answer adds evidence to the options it supports
 * (a vote adds its weight to one option; a score vector adds its scores rescaled into [0, 1]).
 * The information the answers carry is the Kullback–Leibler divergence, in bits, from the belief
 * before to the belief after (the posterior mean shares):
 *
 *     bits = Σ_i post_i · log2(post_i / prior_i),   prior_i = a_i / A,  post_i = (a_i + e_i) / (A + E)
 *
 * Why this one: it is >= 0 (Gibbs' inequality) and 0 exactly when the answers leave the belief
 * where it was (no answers, or evidence spread exactly like the prior); it grows with agreeing
 * evidence (slowly, logarithmically) and much faster with evidence that overturns the prior; and it
 * needs only the answers, not the outstanding set. It is bounded by log2(A / min_i a_i) — with the
 * pseudo-counts above, log2(k + 1) for k options — so "bits per committed branch" falls as
 * redundant branches pile up, which is the inversion the founding note asks operators to watch.
 *
 * @example
 * dirichletInfoBits([2, 1], [0, 0]); // 0: no evidence
 * dirichletInfoBits([2, 1], [3, 0]); // ≈ 0.10: three votes that confirm the prior
 * dirichletInfoBits([2, 1], [0, 3]); // ≈ 0.33: three votes that overturn it
 */
export function dirichletInfoBits(pseudo: readonly number[], evidence: readonly number[]): number {
  let a = 0;
  let e = 0;
  for (let i = 0; i < pseudo.length; i++) {
    a += pseudo[i] ?? 0;
    e += evidence[i] ?? 0;
  }
  if (e <= 0 || a <= 0) return 0;
  let bits = 0;
  for (let i = 0; i < pseudo.length; i++) {
    const ai = pseudo[i] ?? 0;
    const post = (ai + (evidence[i] ?? 0)) / (a + e);
    if (post > 0 && ai > 0) bits += post * Math.log2(post / (ai / a));
  }
  return bits > 0 ? bits : 0;
}

/** Pseudo-counts of the belief before any answer: one per option, one more for the prior. */
export function priorPseudoCounts(options: readonly string[], prior: string): number[] {
  return options.map((o) => (o === prior ? 2 : 1));
}
