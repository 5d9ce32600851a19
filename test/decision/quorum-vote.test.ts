import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { TailswarmError } from "../../src/errors.js";
import { quorumVote, type VoteAnswer } from "../../src/decision/quorum-vote.js";

const OPTIONS = ["a", "b", "c"];

/** Every assignment of `options` to `peers` (each peer may also abstain when `abstain`). */
function* assignments(
  peers: string[],
  options: string[],
  abstain: boolean,
): Generator<Map<string, VoteAnswer>> {
  const choices = abstain ? [...options, null] : options;
  const idx = peers.map(() => 0);
  for (;;) {
    const m = new Map<string, VoteAnswer>();
    peers.forEach((p, i) => {
      const c = choices[idx[i] ?? 0];
      if (c !== null && c !== undefined) m.set(p, { vote: c });
    });
    yield m;
    let i = 0;
    while (i < peers.length && (idx[i] = ((idx[i] ?? 0) + 1) % choices.length) === 0) i++;
    if (i === peers.length) return;
  }
}

const scenario = fc
  .record({
    k: fc.integer({ min: 1, max: 3 }),
    prior: fc.integer({ min: 0, max: 2 }),
    required: fc.integer({ min: 0, max: 6 }),
    weights: fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 8, maxLength: 8 }),
    answered: fc.array(fc.integer({ min: 0, max: 2 }), { maxLength: 4 }),
    outstanding: fc.array(fc.integer({ min: 0, max: 7 }), { maxLength: 4 }),
  })
  .map(({ k, prior, required, weights, answered, outstanding }) => {
    const options = OPTIONS.slice(0, k);
    const answers = new Map<string, VoteAnswer>(
      answered.map((v, i) => [`p${i}`, { vote: options[v % k] ?? "a" }] as const),
    );
    return {
      options,
      prior: options[prior % k] ?? "a",
      required,
      weights: Object.fromEntries(weights.map((w, i) => [`p${i}`, w])),
      answers,
      // peer ids overlap the answered ones and repeat on purpose: canFlip must ignore both
      outstanding: outstanding.map((i) => `p${i}`),
    };
  });

describe("quorumVote", () => {
  it("canFlip agrees with brute-force enumeration of the outstanding votes", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const model = quorumVote(s);
        const current = model.decide(s.answers);
        const pending = [...new Set(s.outstanding)].filter((p) => !s.answers.has(p));
        let flips = false;
        let flipsWithAbstain = false;
        for (const extra of assignments(pending, s.options, false)) {
          if (model.decide(new Map([...s.answers, ...extra])) !== current) flips = true;
        }
        for (const extra of assignments(pending, s.options, true)) {
          if (model.decide(new Map([...s.answers, ...extra])) !== current) flipsWithAbstain = true;
        }
        expect(model.canFlip(s.answers, s.outstanding)).toBe(flips);
        // what some of the outstanding could do, all of them can: abstaining adds no flips
        expect(flipsWithAbstain).toBe(flips);
      }),
      { numRuns: 1500 },
    );
  });

  it("decides by strict plurality, the prior breaking ties and deciding with no answers", () => {
    const m = quorumVote({ prior: "no" });
    expect(m.decide(new Map())).toBe("no");
    expect(m.decide(new Map([["a", { vote: "yes" }]]))).toBe("yes");
    expect(
      m.decide(
        new Map([
          ["a", { vote: "yes" }],
          ["b", { vote: "no" }],
        ]),
      ),
    ).toBe("no");
    const three = quorumVote({ options: ["x", "y", "z"], prior: "z" });
    const tie = new Map([
      ["a", { vote: "x" }],
      ["b", { vote: "y" }],
    ]);
    expect(three.decide(tie)).toBe("z");
  });

  it("needs `required` weight for a winner, with weights per peer", () => {
    const m = quorumVote({ prior: "no", required: 3, weights: { big: 2 } });
    const two = new Map([
      ["a", { vote: "yes" }],
      ["b", { vote: "yes" }],
    ]);
    expect(m.decide(two)).toBe("no");
    expect(m.canFlip(two, ["c"])).toBe(true);
    expect(m.canFlip(two, [])).toBe(false);
    expect(m.decide(new Map([...two, ["big", { vote: "yes" }]]))).toBe("yes");
    expect(m.decide(new Map([["big", { vote: "yes" }]]))).toBe("no");
  });

  it("says a settled vote cannot flip", () => {
    const m = quorumVote({ prior: "no" });
    const answers = new Map([
      ["a", { vote: "yes" }],
      ["b", { vote: "yes" }],
      ["c", { vote: "yes" }],
    ]);
    expect(m.canFlip(answers, ["d", "e"])).toBe(false);
    expect(m.canFlip(answers, ["d", "e", "f"])).toBe(true); // 3–3 is a tie, the prior wins
  });

  it("validates answers from the wire, naming the field", () => {
    const m = quorumVote({ prior: "no" });
    expect(m.parseAnswer({ vote: "yes" })).toEqual({ vote: "yes" });
    for (const [raw, text] of [
      [null, "answer: got null, expected an object { vote: string }"],
      ["yes", 'answer: got "yes", expected an object { vote: string }'],
      [{}, "answer.vote: got nothing, expected a string"],
      [{ vote: 1 }, "answer.vote: got 1, expected a string"],
      [{ vote: "maybe" }, 'answer.vote: got "maybe", expected one of yes, no'],
    ] as const) {
      expect(() => m.parseAnswer(raw)).toThrow(text);
      try {
        m.parseAnswer(raw);
      } catch (err) {
        expect(TailswarmError.is(err, "INVALID_ARGUMENT")).toBe(true);
      }
    }
  });

  it("rejects a bad configuration", () => {
    expect(() => quorumVote({ prior: "maybe" })).toThrow(/prior: got "maybe", expected one of the options/);
    expect(() => quorumVote({ options: ["a", "a"], prior: "a" })).toThrow(/distinct/);
    expect(() => quorumVote({ prior: "no", required: -1 })).toThrow(/required/);
    expect(() => quorumVote({ prior: "no", weights: { p: -1 } })).toThrow(/weights\["p"\]/);
  });

  it("informationBits is 0 with no answers, >= 0 always, and larger when answers overturn the prior", () => {
    fc.assert(
      fc.property(scenario, (s) => {
        const bits = quorumVote(s).informationBits(s.answers);
        expect(bits).toBeGreaterThanOrEqual(0);
        expect(bits).toBeLessThanOrEqual(Math.log2(s.options.length + 1) + 1e-9);
      }),
    );
    const m = quorumVote({ prior: "no" });
    expect(m.informationBits(new Map())).toBe(0);
    const confirm = m.informationBits(new Map([["a", { vote: "no" }]]));
    const overturn = m.informationBits(new Map([["a", { vote: "yes" }]]));
    expect(confirm).toBeGreaterThan(0);
    expect(overturn).toBeGreaterThan(confirm);
  });
});
