/**
 * The index of the strict maximum of a tally (votes per option, summed scores per action), or −1 when
 * the top is tied or nothing is above −Infinity: the models fall back to their prior then, so a tie
 * never picks an action by its position in the list.
 */
export function strictMaxIndex(xs: readonly number[]): number {
  let best = -1;
  let bestValue = -Infinity;
  let tied = false;
  xs.forEach((v, i) => {
    if (v > bestValue) {
      best = i;
      bestValue = v;
      tied = false;
    } else if (v === bestValue) tied = true;
  });
  return tied ? -1 : best;
}
