/**
 * The decision of a `context` task (src/peers/context-worker.ts): which served result the request uses.
 * Every answer is a served result of the same request, so the answers are interchangeable, not votes:
 * `prefer: "first"` (default) takes the first to arrive, `"verified"` the first that went through a
 * verifier job (`downstream > 0`), else the first. With no answers the action is the prior, `null`.
 *
 * `canFlip` is exact: a later answer never displaces an earlier pick, so the action is settled as soon as
 * an answer ("first") or a verified answer ("verified") is in. `informationBits` is 1 when the request
 * was served, else 0, so per committed branch it is 1/n and redundant branches lower it.
 *
 * @example
 * const model = contextResult();
 * const answers = new Map([["b", model.parseAnswer({ node: "b", hit: true, work: 1, downstream: 0 })]]);
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
