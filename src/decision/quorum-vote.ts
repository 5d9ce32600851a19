import type { TailswarmError } from "../errors.js";
import { invalid, showValue } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { dirichletInfoBits, priorPseudoCounts } from "./information.js";
import { pendingPeers } from "./pending.js";
import { strictMaxIndex } from "./strict-max.js";
import type { DecisionModel } from "./types.js";

/** A peer's answer to a vote, as it travels on the wire. */
export interface VoteAnswer {
  readonly vote: string;
}

export interface QuorumVoteOptions {
  /** The options a peer may vote for. Default `["yes", "no"]`. */
  readonly options?: readonly string[];
  /** The local decision: it wins ties, and decides when no option reaches `required`. */
  readonly prior: string;
  /**
   * Weight of votes the winning option needs. Default 0: plurality. For a strict majority of n
   * voters of weight 1, pass `Math.floor(n / 2) + 1`.
   */
  readonly required?: number;
  /** Weight of each peer's vote (>= 0, finite). Peers not listed weigh 1. */
  readonly weights?: ReadonlyMap<PeerId, number> | Readonly<Record<PeerId, number>>;
}

/**
 * A weighted vote with a local prior. The action is the option with the strictly largest tally of
 * weight, provided it reaches `required`; otherwise — a tie at the top, too few votes, no answers —
 * the prior.
 *
 * `canFlip` is exact, by counting: every outstanding peer can put its weight W on one option.
 * - When a peer option A ≠ prior leads, the outstanding can flip it iff the strongest rival B can
 *   reach a tie: `tally(B) + W >= tally(A)` (a tie hands the action to the prior).
 * - When the prior holds, they can flip it iff some B ≠ prior can become the strict leader and reach
 *   `required`: `tally(B) + W > max over C ≠ B of tally(C)` and `tally(B) + W >= required`.
 * (With weights >= 0, what any subset of the outstanding could do, all of them can do too.)
 *
 * `informationBits`: see `dirichletInfoBits` — one pseudo-vote per option, one more for the prior,
 * plus the weighted tallies.
 *
 * @example
 * const model = quorumVote({ prior: "no", required: 3 });
 * const answers = new Map([["a", { vote: "yes" }], ["b", { vote: "yes" }]]);
 * model.decide(answers);            // "no": "yes" has 2 of the 3 it needs
 * model.canFlip(answers, ["c"]);    // true: "c" voting yes makes 3
 * model.canFlip(answers, []);       // false
 */
export function quorumVote(opts: QuorumVoteOptions): DecisionModel<VoteAnswer, string> {
  const options = validateOptions(opts.options ?? ["yes", "no"]);
  const index = new Map(options.map((o, i) => [o, i] as const));
  const prior = opts.prior;
  if (!index.has(prior)) {
    throw invalid("prior", prior, `one of the options (${options.join(", ")})`);
  }
  const required = opts.required ?? 0;
  if (typeof required !== "number" || !Number.isFinite(required) || required < 0) {
    throw invalid("required", required, "a number >= 0");
  }
  const { weightOf, integral } = weightLookup(opts.weights);
  const pseudo = priorPseudoCounts(options, prior);

  const tally = (answers: ReadonlyMap<PeerId, VoteAnswer>): number[] => {
    const t = options.map(() => 0);
    for (const [peer, answer] of answers) {
      const i = index.get(answer.vote);
      if (i === undefined) throw badVote(answer.vote, options);
      t[i] = (t[i] ?? 0) + weightOf(peer);
    }
    return t;
  };

  const winner = (t: readonly number[]): string => {
    const i = strictMaxIndex(t);
    if (i < 0 || t[i]! < required) return prior;
    return options[i] ?? prior;
  };

  return {
    name: "quorum-vote",
    parseAnswer(raw: unknown): VoteAnswer {
      if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
        throw invalid("answer", raw, "an object { vote: string }");
      }
      const vote = (raw as { vote?: unknown }).vote;
      if (typeof vote !== "string") {
        throw invalid("answer.vote", vote, "a string");
      }
      if (!index.has(vote)) throw badVote(vote, options);
      return { vote };
    },
    decide(answers) {
      return winner(tally(answers));
    },
    canFlip(answers, outstanding) {
      const w = pendingPeers(answers, outstanding).reduce((sum, peer) => sum + weightOf(peer), 0);
      if (w <= 0) return false;
      const t = tally(answers);
      const action = winner(t);
      const a = index.get(action) ?? 0;
      if (action !== prior) {
        let rival = -Infinity;
        t.forEach((tb, b) => {
          if (b !== a && tb > rival) rival = tb;
        });
        return rival + w >= (t[a] ?? 0);
      }
      return t.some((tb, b) => {
        if (b === a) return false;
        const reach = tb + w;
        return reach >= required && t.every((tc, c) => c === b || reach > tc);
      });
    },
    informationBits(answers) {
      return dirichletInfoBits(pseudo, tally(answers));
    },
    // One tally, each vote taken out and put back. Exact when every weight is an integer and every
    // tally a safe one (no sum of them rounds); otherwise undefined: leave-one-out decides it.
    ...(integral && {
      decisionRelevant(answers: ReadonlyMap<PeerId, VoteAnswer>): PeerId[] | undefined {
        const t = tally(answers);
        if (!t.every(Number.isSafeInteger)) return undefined;
        const action = winner(t);
        const relevant: PeerId[] = [];
        for (const [peer, answer] of answers) {
          const i = index.get(answer.vote)!;
          const kept = t[i]!;
          t[i] = kept - weightOf(peer);
          if (winner(t) !== action) relevant.push(peer);
          t[i] = kept;
        }
        return relevant;
      },
    }),
  };
}

function validateOptions(options: readonly string[]): readonly string[] {
  if (!Array.isArray(options) || options.length === 0) {
    throw invalid("options", options, "a non-empty array of strings");
  }
  const seen = new Set<string>();
  for (const o of options) {
    if (typeof o !== "string" || o === "" || seen.has(o)) {
      throw invalid("options", options, `distinct non-empty strings (${showValue(o)} is not)`);
    }
    seen.add(o);
  }
  return [...options];
}

function weightLookup(weights: ReadonlyMap<PeerId, number> | Readonly<Record<PeerId, number>> | undefined): {
  weightOf: (peer: PeerId) => number;
  /** Every weight (and the default 1) is a safe integer. */
  integral: boolean;
} {
  // a copy: the weights are checked once, here, and must not change after
  const map: ReadonlyMap<PeerId, number> = new Map(
    weights === undefined ? [] : weights instanceof Map ? weights : Object.entries(weights),
  );
  for (const [peer, w] of map) {
    if (typeof w !== "number" || !Number.isFinite(w) || w < 0) {
      throw invalid(`weights[${showValue(peer)}]`, w, "a number >= 0");
    }
  }
  return { weightOf: (peer) => map.get(peer) ?? 1, integral: [...map.values()].every(Number.isSafeInteger) };
}

function badVote(vote: string, options: readonly string[]): TailswarmError {
  return invalid("answer.vote", vote, `one of ${options.join(", ")}`);
}
