import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { argmaxScores } from "../../src/decision/argmax-scores.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import { quorumVote } from "../../src/decision/quorum-vote.js";
import { decisionRelevantRate, leaveOneOut, scoreRelevance } from "../../src/decision/score-relevance.js";
import { TailswarmError } from "../../src/errors.js";

const votes = (...v: [string, string][]) => new Map(v.map(([peer, vote]) => [peer, { vote }] as const));

describe("scoreRelevance (leave-one-out)", () => {
  it("marks the answers whose removal changes the action", () => {
    const m = quorumVote({ prior: "no" });
    const score = scoreRelevance(m, votes(["a", "yes"], ["b", "no"], ["c", "yes"]));
    expect(score.action).toBe("yes");
    expect(score.decisionRelevant).toEqual(["a", "c"]); // without either, 1–1 ties to the prior
    expect(score.committed).toBe(3);
    expect(decisionRelevantRate(score)).toBeCloseTo(2 / 3);
    expect(score.infoGainPerCommitted).toBeCloseTo(
      m.informationBits(votes(["a", "yes"], ["b", "no"], ["c", "yes"])) / 3,
    );
  });

  it("scores redundant commits as not relevant: the founding note's low-information commits", () => {
    const m = quorumVote({ prior: "no" });
    const score = scoreRelevance(m, votes(["a", "yes"], ["b", "yes"], ["c", "yes"], ["d", "no"]));
    expect(score.action).toBe("yes");
    expect(score.decisionRelevant).toEqual([]); // 3–1: no single vote decides
    expect(decisionRelevantRate(score)).toBe(0);
  });

  it("scores answers that confirm the prior as not relevant", () => {
    const m = quorumVote({ prior: "no" });
    expect(scoreRelevance(m, votes(["a", "no"], ["b", "no"])).decisionRelevant).toEqual([]);
  });

  it("a single answer that overturns the prior is relevant", () => {
    const m = quorumVote({ prior: "no" });
    expect(scoreRelevance(m, votes(["a", "yes"])).decisionRelevant).toEqual(["a"]);
  });

  it("works for argmax: the answer that carried the lead is relevant", () => {
    const m = argmaxScores({ actions: ["x", "y"], prior: "x", bounds: { min: 0, max: 10 } });
    const score = scoreRelevance(
      m,
      new Map([
        ["a", { scores: { x: 2, y: 9 } }],
        ["b", { scores: { x: 3, y: 3 } }],
      ]),
    );
    expect(score.action).toBe("y");
    expect(score.decisionRelevant).toEqual(["a"]);
  });

  it("gives null rates when nothing was committed", () => {
    const score = scoreRelevance(quorumVote({ prior: "no" }), new Map());
    expect(score).toEqual({ action: "no", decisionRelevant: [], committed: 0, infoGainPerCommitted: null });
    expect(decisionRelevantRate(score)).toBeNull();
  });

  it("compares object actions structurally", () => {
    const m = predicateModel<number, { go: boolean }>({
      prior: { go: false },
      decide: (a) => ({ go: [...a.values()].reduce((s, v) => s + v, 0) > 1 }),
      canFlip: () => true,
    });
    const score = scoreRelevance(
      m,
      new Map([
        ["a", 1],
        ["b", 1],
        ["c", 0],
      ]),
    );
    expect(score.action).toEqual({ go: true });
    expect(score.decisionRelevant).toEqual(["a", "b"]);
  });
});

describe("predicateModel", () => {
  const stop = predicateModel<{ stop: boolean }, "stop" | "go">({
    name: "first-stop",
    prior: "go",
    decide: (answers) => ([...answers.values()].some((a) => a.stop) ? "stop" : "go"),
    canFlip: (answers, outstanding) => outstanding.length > 0 && ![...answers.values()].some((a) => a.stop),
    parseAnswer: (raw) => {
      if (typeof (raw as { stop?: unknown } | null)?.stop !== "boolean") {
        throw new TailswarmError("INVALID_ARGUMENT", "stop must be a boolean");
      }
      return raw as { stop: boolean };
    },
  });

  it("uses the prior with no answers and the caller's functions otherwise", () => {
    expect(stop.name).toBe("first-stop");
    expect(stop.decide(new Map())).toBe("go");
    expect(stop.decide(new Map([["a", { stop: true }]]))).toBe("stop");
    expect(stop.canFlip(new Map([["a", { stop: false }]]), ["b"])).toBe(true);
    expect(stop.parseAnswer({ stop: false })).toEqual({ stop: false });
    expect(() => stop.parseAnswer({ stop: "no" })).toThrow("stop must be a boolean");
  });

  it("drops outstanding peers that already answered before asking the caller", () => {
    expect(stop.canFlip(new Map([["a", { stop: false }]]), ["a", "a"])).toBe(false);
  });

  it("defaults informationBits to one bit when the answers moved the action, and checks a caller's", () => {
    expect(stop.informationBits(new Map([["a", { stop: false }]]))).toBe(0);
    expect(stop.informationBits(new Map([["a", { stop: true }]]))).toBe(1);
    const bad = predicateModel({
      prior: "x",
      decide: () => "x",
      canFlip: () => false,
      informationBits: () => -1,
    });
    expect(() => bad.informationBits(new Map([["a", 1]]))).toThrow(
      /predicate\.informationBits: got -1, expected a number >= 0/,
    );
  });

  it("a quorum vote's one-pass count is exactly leave-one-out, ties and weights included", () => {
    const options = ["yes", "no", "maybe"];
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom(...options), fc.integer({ min: 0, max: 3 })), { maxLength: 12 }),
        fc.constantFrom(...options),
        fc.integer({ min: 0, max: 12 }),
        (cast, prior, required) => {
          const weights = new Map(cast.map(([, w], i) => [`p${i}`, w] as const));
          const m = quorumVote({ options, prior, required, weights });
          const answers = new Map(cast.map(([vote], i) => [`p${i}`, { vote }] as const));
          expect(m.decisionRelevant?.(answers)).toEqual(leaveOneOut(m, answers));
        },
      ),
    );
    // a non-integer weight leaves it to leave-one-out, which no rounding can mislead
    expect(quorumVote({ prior: "no", weights: { a: 0.1 } }).decisionRelevant?.(new Map())).toBeUndefined();
    // so do tallies past 2^53, where a sum of integers rounds
    const max = Number.MAX_SAFE_INTEGER;
    const big = quorumVote({ prior: "no", weights: { a: max, b: 1, c: 1, d: max - 1 } });
    const cast = votes(["a", "yes"], ["b", "yes"], ["c", "yes"], ["d", "no"]);
    expect(big.decisionRelevant?.(votes(["a", "yes"], ["d", "no"]))).toEqual(["a"]);
    expect(big.decisionRelevant?.(cast)).toBeUndefined();
    expect(scoreRelevance(big, cast).decisionRelevant).toEqual(leaveOneOut(big, cast));
    // the weights are the model's own copy: changing the caller's map later changes nothing
    const weights = new Map([["a", 2]]);
    const copied = quorumVote({ prior: "no", weights });
    weights.set("a", 0.5);
    expect(copied.decide(votes(["a", "yes"], ["b", "no"]))).toBe("yes");
  });
});
