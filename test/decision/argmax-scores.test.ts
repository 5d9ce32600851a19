import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argmaxScores, type ScoresAnswer } from "../../src/decision/argmax-scores.js";
import { TailswarmError } from "../../src/errors.js";

const ACTIONS = ["a", "b", "c"];

/** Every integer score vector over `actions` within [min, max]. */
function vectors(actions: string[], min: number, max: number): ScoresAnswer[] {
  let out: Record<string, number>[] = [{}];
  for (const action of actions) {
    const next: Record<string, number>[] = [];
    for (const partial of out) for (let v = min; v <= max; v++) next.push({ ...partial, [action]: v });
    out = next;
  }
  return out.map((scores) => ({ scores }));
}

/** Every way the pending peers can answer, each with any vector from `choices`. */
function* assignments(peers: string[], choices: ScoresAnswer[]): Generator<Map<string, ScoresAnswer>> {
  const idx = peers.map(() => 0);
  for (;;) {
    yield new Map(peers.map((p, i) => [p, choices[idx[i] ?? 0] ?? { scores: {} }] as const));
    let i = 0;
    while (i < peers.length && (idx[i] = ((idx[i] ?? 0) + 1) % choices.length) === 0) i++;
    if (i === peers.length) return;
  }
}

const scenario = fc
  .record({
    k: fc.integer({ min: 1, max: 3 }),
    prior: fc.integer({ min: 0, max: 2 }),
    min: fc.integer({ min: -2, max: 2 }),
    span: fc.integer({ min: 0, max: 2 }),
    answered: fc.array(fc.array(fc.nat(), { minLength: 3, maxLength: 3 }), { maxLength: 3 }),
    outstanding: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
  })
  .map(({ k, prior, min, span, answered, outstanding }) => {
    const actions = ACTIONS.slice(0, k);
    const max = min + span;
    const answers = new Map<string, ScoresAnswer>(
      answered.map(
        (raw, i) =>
          [
            `p${i}`,
            { scores: Object.fromEntries(actions.map((a, j) => [a, min + ((raw[j] ?? 0) % (span + 1))])) },
          ] as const,
      ),
    );
    return {
      actions,
      prior: actions[prior % k] ?? "a",
      bounds: { min, max },
      answers,
      outstanding: outstanding.map((i) => `p${i}`),
    };
  });

describe("argmaxScores", () => {
  it("canFlip agrees with brute force over every integer score the outstanding could send", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const model = argmaxScores(s);
        const current = model.decide(s.answers);
        const pending = [...new Set(s.outstanding)].filter((p) => !s.answers.has(p));
        const choices = vectors(s.actions, s.bounds.min, s.bounds.max);
        let flips = false;
        for (const extra of assignments(pending, choices)) {
          if (model.decide(new Map([...s.answers, ...extra])) !== current) {
            flips = true;
            break;
          }
        }
        expect(model.canFlip(s.answers, s.outstanding)).toBe(flips);
      }),
      { numRuns: 1000 },
    );
  });

  it("takes the argmax of summed scores, the prior winning ties", () => {
    const m = argmaxScores({
      actions: ["retry", "skip", "abort"],
      prior: "retry",
      bounds: { min: 0, max: 10 },
    });
    expect(m.decide(new Map())).toBe("retry");
    const answers = new Map([
      ["a", { scores: { retry: 1, skip: 9, abort: 0 } }],
      ["b", { scores: { retry: 5, skip: 2, abort: 8 } }],
    ]);
    expect(m.decide(answers)).toBe("skip"); // 6, 11, 8
    expect(m.canFlip(answers, ["c"])).toBe(true);
    const tie = new Map([["a", { scores: { retry: 0, skip: 5, abort: 5 } }]]);
    expect(m.decide(tie)).toBe("retry");
  });

  it("says a lead wider than the outstanding can close cannot flip", () => {
    const m = argmaxScores({ actions: ["x", "y"], prior: "x", bounds: { min: 0, max: 1 } });
    const lead = new Map(["a", "b", "c"].map((p) => [p, { scores: { x: 0, y: 1 } }] as const));
    expect(m.decide(lead)).toBe("y");
    expect(m.canFlip(lead, ["d", "e"])).toBe(false); // y 3 vs x at most 2
    expect(m.canFlip(lead, ["d", "e", "f"])).toBe(true); // 3–3 tie goes to the prior
  });

  it("validates answers, naming the field", () => {
    const m = argmaxScores({ actions: ["x", "y"], prior: "x", bounds: { min: 0, max: 1 } });
    expect(m.parseAnswer({ scores: { x: 0.5, y: 1 } })).toEqual({ scores: { x: 0.5, y: 1 } });
    for (const [raw, text] of [
      [null, "answer.scores: got nothing, expected an object { <action>: number }"],
      [{ scores: 3 }, "answer.scores: got 3, expected an object { <action>: number }"],
      [{ scores: { x: 0.5 } }, "answer.scores.y: got nothing, expected a number >= 0 <= 1"],
      [{ scores: { x: 2, y: 0 } }, "answer.scores.x: got 2, expected a number >= 0 <= 1"],
      [
        { scores: { x: 0, y: 0, z: 0 } },
        "answer.scores.z: got 0, expected no such key: only the actions x, y",
      ],
    ] as const) {
      let caught: unknown;
      try {
        m.parseAnswer(raw);
      } catch (err) {
        caught = err;
      }
      expect(TailswarmError.is(caught, "INVALID_ARGUMENT")).toBe(true);
      expect((caught as Error).message).toContain(text);
    }
  });

  it("rejects a bad configuration", () => {
    expect(() => argmaxScores({ actions: [], prior: "x", bounds: { min: 0, max: 1 } })).toThrow(/actions/);
    expect(() => argmaxScores({ actions: ["x"], prior: "y", bounds: { min: 0, max: 1 } })).toThrow(/prior/);
    expect(() => argmaxScores({ actions: ["x"], prior: "x", bounds: { min: 1, max: 0 } })).toThrow(/bounds/);
  });

  it("informationBits is >= 0, and 0 with no answers", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        expect(argmaxScores(s).informationBits(s.answers)).toBeGreaterThanOrEqual(0);
        expect(argmaxScores(s).informationBits(new Map())).toBe(0);
      }),
    );
  });
});
