/** The known word closest to a mistyped one (case-insensitive edit distance), when one is close enough. */

function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j]!;
      d[j] = Math.min(
        d[j]! + 1,
        d[j - 1]! + 1,
        prev + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return d[b.length]!;
}

/**
 * @example
 * didYouMean("regoin", ["region", "listen"]); // "region"
 */
export function didYouMean(word: string, known: readonly string[]): string | undefined {
  if (word.length > 200) return undefined;
  const best = known.map((k) => ({ k, d: distance(word, k) })).sort((x, y) => x.d - y.d)[0];
  return best !== undefined && best.d <= Math.max(2, Math.floor(word.length / 4)) ? best.k : undefined;
}
