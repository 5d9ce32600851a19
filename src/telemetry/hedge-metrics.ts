/**
 * Telemetry of replicated (hedged) fan-outs (docs/hedging.md, docs/telemetry.md): the backups issued,
 * won, lost and refused by reason, and the work cut from losers, as counters; and a
 * `tailswarm.hedged_fanout` span per fan-out with one event per hedge decision that settled something
 * (a backup sent, or refused for good) carrying its reason and the numbers it was decided on. A
 * HedgeObserver through @opentelemetry/api only: without an SDK it costs almost nothing.
 *
 * The span is recorded when the fan-out returns, with its real start time, under the context active
 * then (a node's Coordinate server span).
 */
import { metrics as otelMetrics, trace, ValueType } from "@opentelemetry/api";
import type { Attributes, Counter, Meter, Tracer } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { HedgedOutcome, HedgedSettlement, HedgeObserver } from "../engine/hedge-outcome.js";
import { INSTRUMENTATION_SCOPE } from "./attributes.js";

export const HEDGE_METRIC = {
  backups: "tailswarm.hedge.backups",
  refused: "tailswarm.hedge.refused",
  lostWork: "tailswarm.hedge.lost_work",
} as const;

export const SPAN_HEDGED_FANOUT = "tailswarm.hedged_fanout";
export const EVENT_HEDGE_DECISION = "tailswarm.hedge.decision";

export const HEDGE_ATTR = {
  policy: "tailswarm.hedge.policy",
  /** issued | won | lost */
  result: "tailswarm.hedge.result",
  /** An issued backup could land by the gated rule's first test. */
  landable: "tailswarm.hedge.landable",
  reason: "tailswarm.hedge.reason",
  action: "tailswarm.hedge.action",
  primary: "tailswarm.hedge.primary",
  backup: "tailswarm.hedge.backup",
  atMs: "tailswarm.hedge.at_ms",
  remainingMs: "tailswarm.hedge.remaining_ms",
  backupP99Ms: "tailswarm.hedge.backup_p99_ms",
  backupP99Kind: "tailswarm.hedge.backup_p99_kind",
  costMs: "tailswarm.hedge.cost_ms",
  gainMs: "tailswarm.hedge.gain_ms",
  primaryMissProbability: "tailswarm.hedge.primary_miss_probability",
  delayMs: "tailswarm.hedge.delay_ms",
  fanoutId: "tailswarm.fanout.id",
  k: "tailswarm.hedge.k",
  replicas: "tailswarm.hedge.replicas",
  deadlineMissed: "tailswarm.deadline_missed",
  elapsedMs: "tailswarm.elapsed_ms",
  budgetMs: "tailswarm.budget_ms",
} as const;

export interface HedgeTelemetryOptions {
  readonly meter?: Meter;
  readonly tracer?: Tracer;
  /** The engine's clock (the span's times). Default: system clock. */
  readonly clock?: Clock;
}

export class HedgeTelemetry implements HedgeObserver {
  readonly #backups: Counter;
  readonly #refused: Counter;
  readonly #lostWork: Counter;
  readonly #tracer: Tracer;
  readonly #clock: Clock;
  readonly #attrs = new Map<string, Attributes>();
  readonly #policyOf = new Map<string, string>();

  constructor(options: HedgeTelemetryOptions = {}) {
    const meter = options.meter ?? otelMetrics.getMeter(INSTRUMENTATION_SCOPE);
    this.#backups = meter.createCounter(HEDGE_METRIC.backups, {
      description: "Backups of replicated fan-outs: issued (landable or not), then won or lost, by policy",
      valueType: ValueType.INT,
      unit: "{backup}",
    });
    this.#refused = meter.createCounter(HEDGE_METRIC.refused, {
      description: "Backups refused for good, by policy and reason",
      valueType: ValueType.INT,
      unit: "{backup}",
    });
    this.#lostWork = meter.createCounter(HEDGE_METRIC.lostWork, {
      description: "Peer work lost to the cut branches of replicated fan-outs, as the peers reported it",
      unit: "ms",
    });
    this.#tracer = options.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE);
    this.#clock = options.clock ?? systemClock;
  }

  #of(...pairs: [string, string | boolean][]): Attributes {
    const key = pairs.map(([k, v]) => `${k}=${String(v)}`).join(",");
    let a = this.#attrs.get(key);
    if (a === undefined) {
      a = Object.freeze(Object.fromEntries(pairs));
      this.#attrs.set(key, a);
    }
    return a;
  }

  onHedgedFanoutEnd(o: HedgedOutcome): void {
    const policy: [string, string] = [HEDGE_ATTR.policy, o.policy];
    for (const b of o.backups) {
      this.#backups.add(
        1,
        this.#of(policy, [HEDGE_ATTR.result, "issued"], [HEDGE_ATTR.landable, b.landable]),
      );
      this.#backups.add(1, this.#of(policy, [HEDGE_ATTR.result, b.won ? "won" : "lost"]));
    }
    for (const d of o.decisions)
      if (d.decision.action === "refuse")
        this.#refused.add(1, this.#of(policy, [HEDGE_ATTR.reason, d.decision.reason]));
    // settled is announced after the end (HedgedFanout resolves it after returning)
    this.#policyOf.set(o.fanoutId, o.policy);
    this.#span(o);
  }

  onHedgedFanoutSettled(fanoutId: string, s: HedgedSettlement): void {
    const policy = this.#policyOf.get(fanoutId);
    this.#policyOf.delete(fanoutId);
    if (policy !== undefined && s.abandonCostMs > 0)
      this.#lostWork.add(s.abandonCostMs, this.#of([HEDGE_ATTR.policy, policy]));
  }

  #span(o: HedgedOutcome): void {
    const end = this.#clock.now();
    const start = end - o.elapsedMs;
    const span = this.#tracer.startSpan(SPAN_HEDGED_FANOUT, {
      startTime: start,
      attributes: {
        [HEDGE_ATTR.fanoutId]: o.fanoutId,
        [HEDGE_ATTR.policy]: o.policy,
        [HEDGE_ATTR.k]: o.k,
        [HEDGE_ATTR.replicas]: o.replicas,
        [HEDGE_ATTR.budgetMs]: o.budgetMs,
      },
    });
    if (!span.isRecording()) {
      span.end(end);
      return;
    }
    for (const r of o.decisions) {
      const d = r.decision;
      const attributes: Attributes = {
        [HEDGE_ATTR.action]: d.action,
        [HEDGE_ATTR.reason]: d.reason,
        [HEDGE_ATTR.primary]: r.primary,
        [HEDGE_ATTR.backup]: r.backup,
        [HEDGE_ATTR.atMs]: r.atMs,
        [HEDGE_ATTR.remainingMs]: d.remainingMs,
        [HEDGE_ATTR.backupP99Kind]: d.backupP99Kind,
        [HEDGE_ATTR.costMs]: d.costMs,
      };
      const put = (key: string, v: number): void => {
        if (Number.isFinite(v)) attributes[key] = v;
      };
      put(HEDGE_ATTR.backupP99Ms, d.backupP99Ms);
      put(HEDGE_ATTR.gainMs, d.gainMs);
      put(HEDGE_ATTR.primaryMissProbability, d.primaryMissProbability);
      put(HEDGE_ATTR.delayMs, d.delayMs);
      if (d.landable !== undefined) attributes[HEDGE_ATTR.landable] = d.landable;
      span.addEvent(EVENT_HEDGE_DECISION, attributes, start + r.atMs);
    }
    span.setAttributes({
      [HEDGE_ATTR.deadlineMissed]: o.deadlineMissed,
      [HEDGE_ATTR.elapsedMs]: o.elapsedMs,
      "tailswarm.hedge.backups_sent": o.backups.length,
      "tailswarm.hedge.backups_won": o.backups.filter((b) => b.won).length,
    });
    span.end(end);
  }
}
