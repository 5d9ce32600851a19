import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { contextResult } from "../../src/decision/context-result.js";
import type { ContextResultAnswer } from "../../src/decision/context-result.js";
import { sameAction } from "../../src/decision/same-action.js";
import { scoreRelevance } from "../../src/decision/score-relevance.js";

const served = (node: string, hit: boolean, downstream: number): ContextResultAnswer => ({
  node,
  queueKey: "rag/0",
  hit,
  work: (hit ? 1 : 4) + 2 * downstream,
  stageWork: hit ? 1 : 4,
  downstream,
});

/** Every way the pending peers can still answer: any subset, in any order, each verified or not. */
function* futures(pending: string[]): Generator<[string, ContextResultAnswer][]> {
  if (pending.length === 0) {
    yield [];
    return;
  }
  yield [];
  for (const [i, peer] of pending.entries()) {
    const rest = pending.filter((_, j) => j !== i);
    for (const downstream of [0, 1]) {
      for (const tail of futures(rest)) yield [[peer, served(peer, downstream === 0, downstream)], ...tail];
    }
  }
}

describe("contextResult", () => {
  it("validates answers, naming the field, and keeps what the peer sent", () => {
    const model = contextResult();
    const answer = { ...served("a", true, 0), extra: { text: "kept" } };
    expect(model.parseAnswer(answer)).toEqual(answer);
    expect(() => model.parseAnswer({ vote: "yes" })).toThrow(/answer\.hit: got nothing, expected a boolean/);
    expect(() => model.parseAnswer({ hit: true, work: -1, downstream: 0 })).toThrow(
      /answer\.work: got -1, expected a finite number >= 0/,
    );
    expect(() => model.parseAnswer({ hit: true, work: 1, downstream: 0.5 })).toThrow(
      /answer\.downstream: got 0\.5, expected an integer >= 0/,
    );
    expect(() => model.parseAnswer(null)).toThrow(/answer: got null, expected an object/);
    expect(() => contextResult({ prefer: "best" as "first" })).toThrow(
      /options\.prefer: got "best", expected one of first, verified/,
    );
  });

  it("uses the first answer; no answer is no result", () => {
    const model = contextResult();
    expect(model.decide(new Map())).toBeNull();
    const answers = new Map([
      ["b", served("b", true, 0)],
      ["a", served("a", false, 1)],
    ]);
    expect(model.decide(answers)).toEqual({ peer: "b", answer: served("b", true, 0) });
    expect(model.canFlip(new Map(), ["a"])).toBe(true);
    expect(model.canFlip(answers, ["c"])).toBe(false);
    expect(model.canFlip(new Map(), [])).toBe(false);
  });

  it("with prefer verified, uses the first verified answer and waits for one while peers are out", () => {
    const model = contextResult({ prefer: "verified" });
    const unverified = new Map([["a", served("a", true, 0)]]);
    expect(model.decide(unverified)).toEqual({ peer: "a", answer: served("a", true, 0) });
    expect(model.canFlip(unverified, ["b"])).toBe(true);
    expect(model.canFlip(unverified, ["a"])).toBe(false); // a has answered: nobody is left
    const both = new Map([...unverified, ["b", served("b", false, 1)]]);
    expect(model.decide(both)).toEqual({ peer: "b", answer: served("b", false, 1) });
    expect(model.canFlip(both, ["c"])).toBe(false);
  });

  it("canFlip agrees with enumerating every later answer, for both preferences", () => {
    const scenario = fc.record({
      prefer: fc.constantFrom("first" as const, "verified" as const),
      answered: fc.array(fc.integer({ min: 0, max: 1 }), { maxLength: 3 }),
      outstanding: fc.array(fc.integer({ min: 0, max: 5 }), { maxLength: 3 }),
    });
    fc.assert(
      fc.property(scenario, ({ prefer, answered, outstanding }) => {
        const model = contextResult({ prefer });
        const answers = new Map<string, ContextResultAnswer>(
          answered.map((d, i) => [`p${i}`, served(`p${i}`, d === 0, d)]),
        );
        // ids overlap the answered ones and repeat on purpose: canFlip must ignore both
        const out = outstanding.map((i) => `p${i}`);
        const pending = [...new Set(out)].filter((p) => !answers.has(p));
        const now = model.decide(answers);
        let flips = false;
        for (const later of futures(pending)) {
          if (!sameAction(model.decide(new Map([...answers, ...later])), now)) flips = true;
        }
        expect(model.canFlip(answers, out)).toBe(flips);
      }),
    );
  });

  it("scores the answer used as the decision-relevant one, and 1 bit over the committed branches", () => {
    const model = contextResult();
    const score = scoreRelevance(
      model,
      new Map([
        ["a", served("a", true, 0)],
        ["b", served("b", false, 1)],
      ]),
    );
    expect(score.action).toEqual({ peer: "a", answer: served("a", true, 0) });
    expect(score.decisionRelevant).toEqual(["a"]);
    expect(score.infoGainPerCommitted).toBe(0.5);
    expect(scoreRelevance(model, new Map()).infoGainPerCommitted).toBeNull();
  });
});
