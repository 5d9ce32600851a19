/**
 * Metrics of a node's passive peer health (docs/telemetry.md): ejections and refused ejections by
 * cause, and returns. Through @opentelemetry/api only; the meter defaults to the global one.
 */
import { metrics as otelMetrics, ValueType } from "@opentelemetry/api";
import type { Attributes, Counter, Meter } from "@opentelemetry/api";
import { INSTRUMENTATION_SCOPE } from "./attributes.js";

export const HEALTH_METRIC = {
  ejections: "tailswarm.health.ejections",
  refused: "tailswarm.health.refused_ejections",
  returns: "tailswarm.health.returns",
} as const;

/** Attribute naming why a peer was (or would have been) ejected: failed, rejected or outlier. */
export const ATTR_HEALTH_CAUSE = "tailswarm.health.cause";

export class HealthMetrics {
  readonly #ejections: Counter;
  readonly #refused: Counter;
  readonly #returns: Counter;
  readonly #attrs = new Map<string, Attributes>();

  constructor(meter: Meter = otelMetrics.getMeter(INSTRUMENTATION_SCOPE)) {
    const int = { valueType: ValueType.INT, unit: "{ejection}" };
    this.#ejections = meter.createCounter(HEALTH_METRIC.ejections, {
      description: "Peers ejected from fan-outs, by cause",
      ...int,
    });
    this.#refused = meter.createCounter(HEALTH_METRIC.refused, {
      description: "Ejections refused because health.maxEjectedPercent of peers were already out, by cause",
      ...int,
    });
    this.#returns = meter.createCounter(HEALTH_METRIC.returns, {
      description: "Ejected peers returned to fan-outs after a good branch on probation",
      valueType: ValueType.INT,
      unit: "{return}",
    });
  }

  #of(cause: string): Attributes {
    let a = this.#attrs.get(cause);
    if (a === undefined) {
      a = Object.freeze({ [ATTR_HEALTH_CAUSE]: cause });
      this.#attrs.set(cause, a);
    }
    return a;
  }

  ejected(cause: string): void {
    this.#ejections.add(1, this.#of(cause));
  }

  refused(cause: string): void {
    this.#refused.add(1, this.#of(cause));
  }

  returned(): void {
    this.#returns.add(1);
  }
}
