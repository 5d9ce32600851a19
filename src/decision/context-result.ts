/**
 * The decision of a `context` task (src/peers/context-worker.ts): which served result the request uses.
 *
 * Every peer that answers a context request has served the same request — with or without its context
 * resident, with or without a verifier job — so the answers are interchangeable results, not votes. The
 * action is one of them, with the peer that served it:
 * - `prefer: "first"` (default): the first answer to arrive. Later answers are redundant hedges.
 * - `prefer: "verified"`: the first answer whose request went through a verifier job (`downstream > 0`),
 *   else the first answer.
 * With no answers the action is the prior, `null`: no result.
 *
 * `canFlip` is exact. Answers are kept in arrival order and a later answer never displaces an earlier
 * pick, so once the action is settled no outstanding answer can change it: with "first", that is as
 * soon as any answer is in; with "verified", as soon as a verified answer is in (until then an
 * outstanding peer may still answer verified).
 *
 * `informationBits`: 1 bit when the answers produced a result (the action left the prior: the request
 * was served or not), 0 otherwise. Per committed branch that is 1/n, so redundant branches lower it,
 * and leave-one-out relevance marks the one branch whose answer was used.
 *
 * @example
 * const model = contextResult();
 * const answers = new Map([["b", model.parseAnswer({ node: "b", hit: true, work: 1, downstream: 0 })]]);
 * model.decide(answers);           // { peer: "b", answer: { node: "b", hit: true, work: 1, downstream: 0 } }
 * model.canFlip(answers, ["c"]);   // false: c's answer would come second
 */
import { invalid } from "../errors.js";
import type { PeerId } from "../estimate/types.js";
import { predicateModel } from "./predicate-model.js";
import type { DecisionModel } from "./types.js";

/** A context worker's answer, as far as the decision reads it; other fields are kept as they are. */
export interface ContextResultAnswer {
  readonly hit: boolean;
  /** Work units the request took (memory stage plus verifier). */
  readonly work: number;
  /** Verifier (downstream) jobs the request created. */
  readonly downstream: number;
  readonly [field: string]: unknown;
}

/** The result the request uses: the answer and the peer that served it; `null` when none answered. */
export type ContextResult = { readonly peer: PeerId; readonly answer: ContextResultAnswer } | null;

export const CONTEXT_PREFERENCES = ["first", "verified"] as const;

export interface ContextResultOptions {
  /** Which answer is the result. Default "first". */
  readonly prefer?: (typeof CONTEXT_PREFERENCES)[number];
}

function bad(field: string, value: unknown, expected: string): never {
  throw invalid(field === "" ? "answer" : `answer.${field}`, value, expected);
}

/** Validates a context answer's hit, work and downstream; throws INVALID_ARGUMENT naming the field. */
export function parseContextAnswer(raw: unknown): ContextResultAnswer {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    bad("", raw, "an object { hit, work, downstream, ... }");
  }
  const a = raw as Record<string, unknown>;
  if (typeof a.hit !== "boolean") bad("hit", a.hit, "a boolean");
  if (typeof a.work !== "number" || !Number.isFinite(a.work) || a.work < 0) {
    bad("work", a.work, "a finite number >= 0");
  }
  if (typeof a.downstream !== "number" || !Number.isInteger(a.downstream) || a.downstream < 0) {
    bad("downstream", a.downstream, "an integer >= 0");
  }
  return a as ContextResultAnswer;
}

const verified = (a: ContextResultAnswer): boolean => a.downstream > 0;

export function contextResult(
  opts: ContextResultOptions = {},
): DecisionModel<ContextResultAnswer, ContextResult> {
  const prefer = opts.prefer ?? "first";
  if (!CONTEXT_PREFERENCES.includes(prefer)) {
    throw invalid("options.prefer", prefer, `one of ${CONTEXT_PREFERENCES.join(", ")}`);
  }
  const pick = (
    answers: ReadonlyMap<PeerId, ContextResultAnswer>,
  ): [PeerId, ContextResultAnswer] | undefined => {
    let first: [PeerId, ContextResultAnswer] | undefined;
    for (const entry of answers) {
      if (prefer === "first" || verified(entry[1])) return entry;
      first ??= entry;
    }
    return first;
  };
  return predicateModel<ContextResultAnswer, ContextResult>({
    name: "context-result",
    prior: null,
    parseAnswer: parseContextAnswer,
    decide(answers) {
      const p = pick(answers);
      return p === undefined ? null : { peer: p[0], answer: p[1] };
    },
    canFlip(answers) {
      // Called with at least one outstanding peer that has not answered.
      if (answers.size === 0) return true;
      if (prefer === "first") return false;
      for (const a of answers.values()) if (verified(a)) return false;
      return true;
    },
  });
}
