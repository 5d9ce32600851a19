/**
 * The information measure behind the built-in models' `informationBits`: the Kullback–Leibler divergence,
 * in bits, from the coordinator's belief before the answers to after, the belief being a Dirichlet over
 * option shares with one pseudo-vote per option plus one for the local prior:
 *
 *     bits = Σ_i post_i · log2(post_i / prior_i),   prior_i = a_i / A,  post_i = (a_i + e_i) / (A + E)
 *
 * Why this one: it is >= 0 and 0 exactly when the answers leave the belief where it was, grows slowly
 * with agreeing evidence and fast with evidence that overturns the prior, needs only the answers, and is
 * bounded (log2(k + 1) for k options), so bits per committed branch fall as redundant branches pile up.
 *
 * @example
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
