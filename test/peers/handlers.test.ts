import { fileURLToPath } from "node:url";
import { dirname, join } from "node:path";
import { describe, expect, it } from "vitest";
import { createLatencyModel } from "../../src/peers/latency-model.js";
import { loadHandler } from "../../src/peers/load-handler.js";
import type { HandlerContext } from "../../src/mesh/handler.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..", "..");
const base = { nodeId: "node-a", region: "eu", baseDir: root, path: "handlers[0]" };

function ctx(overrides: Partial<HandlerContext> = {}): HandlerContext {
  return {
    signal: new AbortController().signal,
    deadline: Date.now() + 5_000,
    fanoutId: "f1",
    hop: 0,
    origin: "coord",
    ...overrides,
  };
}

describe("shipped handlers", () => {
  it("echo returns the payload", async () => {
    const h = await loadHandler({ kind: "echo", use: "echo" }, base);
    expect(await h.handle({ kind: "echo", payload: { a: [1, 2] } }, ctx())).toEqual({ a: [1, 2] });
  });

  it("vote answers from stance, truth when informed, and a seeded draw otherwise", async () => {
    const stance = await loadHandler({ kind: "vote", use: "vote", options: { stance: "hold" } }, base);
    const informed = await loadHandler(
      { kind: "vote", use: "vote", options: { stance: "hold", informed: true } },
      base,
    );
    const drawn = await loadHandler({ kind: "vote", use: "vote", options: { seed: 3 } }, base);
    const task = { kind: "vote", payload: { question: "q1", options: ["hold", "sell"], truth: "sell" } };
    expect(await stance.handle(task, ctx())).toEqual({ vote: "hold" });
    expect(await informed.handle(task, ctx())).toEqual({ vote: "sell" });
    const first = (await drawn.handle(task, ctx())) as { vote: string };
    expect(["hold", "sell"]).toContain(first.vote);
    expect(await drawn.handle(task, ctx())).toEqual(first);
    const weighted = await loadHandler(
      { kind: "vote", use: "vote", options: { weights: { sell: 1, hold: 0 } } },
      base,
    );
    expect(await weighted.handle(task, ctx())).toEqual({ vote: "sell" });
  });

  it("vote rejects a bad payload with INVALID_ARGUMENT naming the field", async () => {
    const h = await loadHandler({ kind: "vote", use: "vote" }, base);
    await expect(h.handle({ kind: "vote", payload: { question: 3 } }, ctx())).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("payload.question"),
    });
  });

  it("rejects unknown options naming the dotted path", async () => {
    await expect(
      loadHandler({ kind: "vote", use: "vote", options: { stanse: "x" } }, base),
    ).rejects.toMatchObject({
      code: "INVALID_CONFIG",
      message: expect.stringContaining("handlers[0].options.stanse"),
    });
    await expect(
      loadHandler({ kind: "s", use: "synthetic", options: { body: { medianMs: -1 } } }, base),
    ).rejects.toThrow(/handlers\[0\]\.options\.body\.medianMs: got -1, expected a number > 0/);
  });

  it("synthetic waits for the model, wraps another handler, and stops when aborted", async () => {
    const h = await loadHandler(
      {
        kind: "vote",
        use: "synthetic",
        options: {
          seed: 1,
          body: { medianMs: 20, sigma: 0 },
          wrap: { use: "vote", options: { stance: "go" } },
        },
      },
      base,
    );
    const task = { kind: "vote", payload: { question: "q" } };
    const start = performance.now();
    expect(await h.handle(task, ctx())).toEqual({ vote: "go" });
    // libuv's timers run on a millisecond clock, so a 20 ms wait can end up to 1 ms early by
    // performance.now().
    expect(performance.now() - start).toBeGreaterThanOrEqual(18);

    const slow = await loadHandler(
      { kind: "s", use: "synthetic", options: { body: { medianMs: 10_000, sigma: 0 } } },
      base,
    );
    const ac = new AbortController();
    const running = slow.handle(task, ctx({ signal: ac.signal }));
    setTimeout(() => ac.abort(new Error("abandoned")), 20);
    await expect(running).rejects.toThrow("abandoned");

    // A deadline shorter than the modelled latency ends the work at the deadline.
    await expect(slow.handle(task, ctx({ deadline: Date.now() + 30 }))).rejects.toMatchObject({
      code: "DEADLINE_EXCEEDED",
    });
  });

  it("synthetic with replayShift reads its model at now − payload.modelClockShiftMs", async () => {
    const options = {
      seed: 5,
      body: { medianMs: 1, sigma: 0 },
      gateway: { group: "g", episodesPerSecond: 0.5, durationMs: { min: 300, max: 300 } },
    };
    const model = createLatencyModel(options);
    const now = Date.now();
    // An episode in the last minute; aim 100 ms into it, so the model says ~200 ms of queueing.
    const e = model.episodesBetween(now - 50_000, now - 1_000)[0]!;
    const shift = now - (e.start + 100);
    const h = await loadHandler(
      { kind: "s", use: "synthetic", options: { ...options, replayShift: true } },
      base,
    );
    const r = (await h.handle({ kind: "s", payload: { modelClockShiftMs: shift } }, ctx())) as {
      queueMs: number;
    };
    expect(r.queueMs).toBeCloseTo(model.gatewayQueueMs(e.start + 100), -2); // within ~50 ms of the model
    expect(r.queueMs).toBeGreaterThan(100);

    // A bad shift is the caller's INVALID_ARGUMENT; without replayShift the field is ignored.
    await expect(h.handle({ kind: "s", payload: { modelClockShiftMs: -5 } }, ctx())).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
      message: expect.stringContaining("payload.modelClockShiftMs: got -5"),
    });
    const plain = await loadHandler({ kind: "s", use: "synthetic", options }, base);
    await expect(
      plain.handle({ kind: "s", payload: { modelClockShiftMs: -5 } }, ctx()),
    ).resolves.toBeDefined();
    await expect(
      loadHandler({ kind: "s", use: "synthetic", options: { ...options, replayShift: "yes" } }, base),
    ).rejects.toThrow(/handlers\[0\]\.options\.replayShift: got "yes", expected true or false/);
  });

  it("synthetic rejects a bad wrap naming the nested path", async () => {
    await expect(
      loadHandler(
        { kind: "s", use: "synthetic", options: { wrap: { use: "vote", options: { nope: 1 } } } },
        base,
      ),
    ).rejects.toThrow(/handlers\[0\]\.options\.wrap\.options\.nope/);
  });
});

describe("user handler modules", () => {
  it("loads createHandler(options, env) from a module path", async () => {
    const h = await loadHandler(
      { kind: "upper", use: "./peers/examples/upper-case.mjs", options: { suffix: "!" } },
      base,
    );
    expect(await h.handle({ kind: "upper", payload: { text: "hi" } }, ctx())).toEqual({
      text: "HI!",
      node: "node-a",
    });
    await expect(h.handle({ kind: "upper", payload: {} }, ctx())).rejects.toMatchObject({
      code: "INVALID_ARGUMENT",
    });
  });

  it("loads an exported handler object", async () => {
    const h = await loadHandler({ kind: "slow", use: "./peers/examples/slow-echo.mjs" }, base);
    expect(h.kind).toBe("slow");
    expect(await h.handle({ kind: "slow", payload: { delayMs: 1 } }, ctx())).toEqual({ delayMs: 1 });
  });

  it("names the entry and the module when it cannot be loaded", async () => {
    await expect(loadHandler({ kind: "x", use: "./peers/examples/missing.mjs" }, base)).rejects.toThrow(
      /handlers\[0\]\.use: got "\.\/peers\/examples\/missing\.mjs", expected .*an ESM module that loads.*ERR_MODULE_NOT_FOUND/,
    );
    await expect(loadHandler({ kind: "x", use: "votes" }, base)).rejects.toThrow(
      /handlers\[0\]\.use: got "votes", expected a shipped handler \(context, echo, synthetic, vote\)/,
    );
  });
});
