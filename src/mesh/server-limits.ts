/**
 * The defaults and ranges of a swarm server's limits (`SwarmServerOptions`), in one place: the server
 * validates its options against them and the node's config keys (`concurrency`, `queueLimit`,
 * `maxPayloadBytes`, `maxJsonDepth`, `maxDeadlineMs`, `deadlineReserveMs`, `replyReserve*`, `defaultBudgetMs`,
 * `drainGraceMs`) read them.
 */
import { MAX_TIMER_MS } from "../clock/clock.js";
import { invalid } from "../errors.js";
import { checkRange, intRange, numberRange } from "../util/range.js";
import type { NumberRange } from "../util/range.js";
import type { ServerLimits } from "./server-core.js";

export interface ServerLimitDefaults extends ServerLimits {
  /** Branches running at once. */
  readonly concurrency: number;
  /** Branches waiting beyond `concurrency`; more are refused with RESOURCE_EXHAUSTED. */
  readonly maxQueue: number;
  /** How long `close()` lets in-flight work finish before abandoning it, ms. */
  readonly drainGraceMs: number;
  /** Bytes the ids of abandons that came before their Branch may hold; the oldest go first. */
  readonly maxAbandonBytes: number;
}

export const SERVER_DEFAULTS: ServerLimitDefaults = {
  concurrency: 64,
  maxQueue: 1_024,
  maxPayloadBytes: 1_048_576,
  deadlineReserveMs: 5,
  // A Coordinate's reserve follows its measured overhead p99, within these bounds; the share keeps a
  // busy loop's overhead from refusing short calls outright (it scales with the call), the absolute cap
  // keeps one stall from taking a long call's budget for a whole window.
  replyReserveMinMs: 1,
  replyReserveMaxMs: 100,
  replyReserveMaxShare: 0.5,
  abandonReplyGraceMs: 50,
  callerClockToleranceMs: 250,
  // A call that carries no deadline still gets a bounded one: a fan-out's worth, not a held slot.
  defaultBudgetMs: 1_000,
  maxJsonDepth: 64,
  // A fan-out is a decision within a budget: an hour is far beyond any, and far below the timer limit.
  maxDeadlineMs: 3_600_000,
  drainGraceMs: 5_000,
  maxAbandonBytes: 8 * 1024 * 1024,
};

export const SERVER_RANGES: Readonly<Record<keyof ServerLimitDefaults, NumberRange>> = {
  concurrency: intRange(1, 100_000),
  maxQueue: intRange(0, 1_000_000),
  maxPayloadBytes: intRange(1, 64 * 1024 * 1024),
  deadlineReserveMs: numberRange(0, 10_000),
  replyReserveMinMs: numberRange(0, 10_000),
  replyReserveMaxMs: numberRange(0, 10_000),
  replyReserveMaxShare: numberRange(0, 1),
  abandonReplyGraceMs: numberRange(0, 60_000),
  callerClockToleranceMs: numberRange(0, 3_600_000),
  defaultBudgetMs: numberRange(1, 3_600_000),
  maxJsonDepth: intRange(1, 1_000),
  maxDeadlineMs: intRange(1, MAX_TIMER_MS),
  drainGraceMs: intRange(0, 3_600_000),
  maxAbandonBytes: intRange(1_024, 1024 * 1024 * 1024),
};

/** The limits of `options` with defaults filled, each checked against its range (INVALID_CONFIG). */
export function resolveServerLimits(options: Partial<Record<keyof ServerLimits, number>>): ServerLimits {
  const value = (key: keyof ServerLimits): number =>
    checkRange(key, options[key] ?? SERVER_DEFAULTS[key], SERVER_RANGES[key]);
  const min = value("replyReserveMinMs");
  const max = value("replyReserveMaxMs");
  if (min > max) {
    throw invalid("replyReserveMinMs", min, `at most replyReserveMaxMs (${max})`, { code: "INVALID_CONFIG" });
  }
  return {
    maxPayloadBytes: value("maxPayloadBytes"),
    deadlineReserveMs: value("deadlineReserveMs"),
    replyReserveMinMs: min,
    replyReserveMaxMs: max,
    replyReserveMaxShare: value("replyReserveMaxShare"),
    abandonReplyGraceMs: value("abandonReplyGraceMs"),
    callerClockToleranceMs: value("callerClockToleranceMs"),
    defaultBudgetMs: value("defaultBudgetMs"),
    maxJsonDepth: value("maxJsonDepth"),
    maxDeadlineMs: value("maxDeadlineMs"),
  };
}
