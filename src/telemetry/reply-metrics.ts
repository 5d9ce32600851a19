/**
 * Metrics of a coordinating node's replies (docs/telemetry.md): Coordinate replies that reached the
 * caller's gRPC deadline or later, by mode, and the reserve kept for the reply. Through
 * @opentelemetry/api only; the meter is the global one when the server is created.
 */
import { metrics as otelMetrics, ValueType } from "@opentelemetry/api";
import type { Attributes, Counter, Histogram } from "@opentelemetry/api";
import { ATTR, INSTRUMENTATION_SCOPE } from "./attributes.js";

export const REPLY_METRIC = {
  deadlineMisses: "tailswarm.coordinate.deadline_misses",
  replies: "tailswarm.coordinate.replies",
  reserve: "tailswarm.coordinate.reply_reserve",
} as const;

export class ReplyMetrics {
  readonly #misses: Counter;
  readonly #replies: Counter;
  readonly #attrs = new Map<string, Attributes>();
  readonly #reserve: Histogram;

  constructor() {
    const meter = otelMetrics.getMeter(INSTRUMENTATION_SCOPE);
    const int = { valueType: ValueType.INT };
    this.#misses = meter.createCounter(REPLY_METRIC.deadlineMisses, {
      description: "Coordinate replies handed to gRPC at or after the caller's deadline, by mode",
      unit: "{reply}",
      ...int,
    });
    this.#replies = meter.createCounter(REPLY_METRIC.replies, {
      description: "Coordinate replies, by mode (the denominator of deadline_misses)",
      unit: "{reply}",
      ...int,
    });
    this.#reserve = meter.createHistogram(REPLY_METRIC.reserve, {
      description:
        "Reserve kept from the caller's deadline for the reply (measured overhead p99 plus event-loop lateness, bounded)",
      unit: "s",
      advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.002, 0.003, 0.005, 0.01, 0.02, 0.05, 0.1] },
    });
  }

  /** One Coordinate reply in `mode`; `missed` when it was handed to gRPC at or after the deadline. */
  reply(mode: string, missed: boolean, reserveMs: number): void {
    let a = this.#attrs.get(mode);
    if (a === undefined) {
      a = Object.freeze({ [ATTR.mode]: mode });
      this.#attrs.set(mode, a);
    }
    this.#replies.add(1, a);
    if (missed) this.#misses.add(1, a);
    this.#reserve.record(reserveMs / 1000, a);
  }
}
