/**
 * Learn-MABP's update and lookup (hand-computed), and what one reply teaches it (`observeAnswer`).
 */
import { describe, expect, it } from "vitest";
import { contextRouteTask } from "../../src/routing/context-task.js";
import { LearnedPrimitives } from "../../src/routing/learned-primitives.js";
import { observeAnswer } from "../../src/routing/observation.js";
import { PrimitiveTable, UNIT_PRIMITIVES } from "../../src/routing/primitives.js";
import { NO_MEMORY, signatureOf } from "../../src/routing/signature.js";

const sig = signatureOf("rag:c1");
const other = signatureOf("rag:c2");
const prior = new PrimitiveTable({ "rag/0": { noReuse: { work: 4, penalty: 4, successors: [] } } });

describe("LearnedPrimitives", () => {
  it("keeps running means of work and penalty, and successor frequencies, per (peer, key, compat)", () => {
    const l = new LearnedPrimitives(prior);
    l.observe("a", "rag/0", NO_MEMORY, { work: 4, penalty: 4, successors: ["rag/1"] });
    l.observe("a", "rag/0", NO_MEMORY, { work: 6, penalty: 2, successors: [] });
    l.observe("a", "rag/0", NO_MEMORY, { work: 2, penalty: 3, successors: ["rag/1", "rag/2"] });
    // work (4 + 6 + 2) / 3, penalty (4 + 2 + 3) / 3, rag/1 in 2 of 3, rag/2 in 1 of 3
    expect(l.profile("a", "rag/0", NO_MEMORY)).toEqual({
      n: 3,
      entry: {
        work: 4,
        penalty: 3,
        successors: [
          { key: "rag/1", p: 2 / 3 },
          { key: "rag/2", p: 1 / 3 },
        ],
      },
    });
    // The entry object is built once and reused until the next observation.
    expect(l.get("a", "rag/0", NO_MEMORY)).toBe(l.get("a", "rag/0", NO_MEMORY));
  });

  it("falls back: own (peer, compat) → the peer's no-reuse → no-reuse over all peers → the prior", () => {
    const l = new LearnedPrimitives(prior);
    // 4. nothing observed for the key: the prior's no-reuse entry, whatever the compat
    expect(l.get("a", "rag/0", sig)).toBe(prior.get("a", "rag/0", NO_MEMORY));
    expect(l.get("a", "other/0", sig)).toBe(UNIT_PRIMITIVES);

    l.observe("a", "rag/0", NO_MEMORY, { work: 8, penalty: 8, successors: [] });
    l.observe("b", "rag/0", NO_MEMORY, { work: 2, penalty: 2, successors: [] });
    // 3. a peer never observed on the key: the mean no-reuse outcome over all peers, (8 + 2) / 2
    expect(l.get("c", "rag/0", NO_MEMORY)).toMatchObject({ work: 5, penalty: 5 });
    expect(l.get("c", "rag/0", sig)).toMatchObject({ work: 5, penalty: 5 });
    // 2. an object the peer holds but was never seen reusing: the peer's own no-reuse values
    expect(l.get("a", "rag/0", sig)).toMatchObject({ work: 8 });
    expect(l.get("b", "rag/0", sig)).toMatchObject({ work: 2 });

    l.observe("a", "rag/0", sig, { work: 1, penalty: 1, successors: [] });
    // 1. the pair itself, once observed; other objects at that peer still take no-reuse values
    expect(l.get("a", "rag/0", sig)).toMatchObject({ work: 1, penalty: 1 });
    expect(l.get("a", "rag/0", other)).toMatchObject({ work: 8 });
    // a reuse observation is not a no-reuse one: the pooled mean is unchanged
    expect(l.get("c", "rag/0", NO_MEMORY)).toMatchObject({ work: 5 });
  });

  it('with unseen: "prior", unseen pairs take the prior (a prior that is the true no-reuse table)', () => {
    const l = new LearnedPrimitives(prior, { unseen: "prior" });
    l.observe("a", "rag/0", NO_MEMORY, { work: 8, penalty: 8, successors: [] });
    expect(l.get("a", "rag/0", NO_MEMORY).work).toBe(8);
    expect(l.get("a", "rag/0", sig).work).toBe(4);
    expect(l.get("b", "rag/0", NO_MEMORY).work).toBe(4);
  });

  it("waits for minSamples observations before a profile replaces its fallback", () => {
    const l = new LearnedPrimitives(prior, { minSamples: 2 });
    l.observe("a", "rag/0", sig, { work: 1, penalty: 1, successors: [] });
    expect(l.get("a", "rag/0", sig).work).toBe(4);
    l.observe("a", "rag/0", sig, { work: 3, penalty: 1, successors: [] });
    expect(l.get("a", "rag/0", sig).work).toBe(2);
  });

  it("drops the oldest-inserted profile past maxProfiles (then its lookup falls back)", () => {
    const l = new LearnedPrimitives(prior, { maxProfiles: 2 });
    l.observe("a", "rag/0", sig, { work: 1, penalty: 1, successors: [] });
    l.observe("a", "rag/0", NO_MEMORY, { work: 3, penalty: 3, successors: [] });
    l.observe("b", "rag/0", other, { work: 2, penalty: 2, successors: [] });
    expect(l.size).toBe(2);
    expect(l.profile("a", "rag/0", sig)).toBeUndefined();
    expect(l.get("a", "rag/0", sig).work).toBe(3); // the peer's no-reuse profile
    expect(l.get("b", "rag/0", other).work).toBe(2);
  });
});

describe("observeAnswer", () => {
  const task = contextRouteTask({ requestClass: "rag", context: "c1" });

  it("a context hit: the memory stage's work at the task's signature, downstream jobs as successors", () => {
    expect(observeAnswer(task, { hit: true, work: 3, stageWork: 1, downstream: 1 }, 12)).toEqual({
      key: "rag/0",
      compat: sig,
      outcome: { work: 1, penalty: 1, successors: ["rag/1"] },
    });
  });

  it("a context miss: at NO_MEMORY; the answer's own penalty when it reports one", () => {
    expect(observeAnswer(task, { hit: false, work: 4, stageWork: 4, downstream: 0, penalty: 6 }, 40)).toEqual(
      {
        key: "rag/0",
        compat: NO_MEMORY,
        outcome: { work: 4, penalty: 6, successors: [] },
      },
    );
  });

  it("a context answer without stageWork (an older peer) counts its whole work", () => {
    expect(observeAnswer(task, { hit: false, work: 7, downstream: 1 }, 40)?.outcome).toEqual({
      work: 7,
      penalty: 7,
      successors: ["rag/1"],
    });
  });

  it("any other answer: service time as work, no penalty, no memory", () => {
    const vote = contextRouteTask({ question: "ship?" });
    expect(observeAnswer(vote, { vote: "yes" }, 2.5)).toEqual({
      key: "default/0",
      compat: NO_MEMORY,
      outcome: { work: 2.5, penalty: 0, successors: [] },
    });
  });

  it("teaches nothing from an answer without positive work", () => {
    expect(observeAnswer(task, { hit: false, work: 0, downstream: 0 }, 5)).toBeUndefined();
    expect(observeAnswer(task, "yes", 0)).toBeUndefined();
    expect(observeAnswer(task, null, Number.NaN)).toBeUndefined();
  });

  it("bounds the successors one reply can claim", () => {
    expect(observeAnswer(task, { hit: false, work: 4, downstream: 1e9 }, 1)?.outcome.successors).toHaveLength(
      16,
    );
  });
});
