/**
 * Traces of fan-outs: one span per fan-out whose attributes explain the decision, one child span per
 * branch with its outcome and the deadline it carried. Records through @opentelemetry/api only.
 *
 * The engine reports through the `FanoutObserver` hooks; the branch spans start in `startBranch`,
 * which `instrumentTransport` calls just before the transport sends the branch, and whose context it
 * gives the transport as `traceContext` — so the mesh's metadata carries the branch span to the peer
 * and the peer's server span hangs under it.
 */
import { context, SpanKind, SpanStatusCode, trace } from "@opentelemetry/api";
import type { Attributes, Context, Span, Tracer } from "@opentelemetry/api";
import type { Clock } from "../clock/clock.js";
import { systemClock } from "../clock/clock.js";
import type { FanoutEstimate, PeerId } from "../estimate/types.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "../engine/outcome.js";
import type { BranchRequest } from "../engine/transport.js";
import type { Classification } from "../policy/types.js";
import { ATTR, EVENT_VIOLATION, INSTRUMENTATION_SCOPE, SPAN_BRANCH, SPAN_FANOUT } from "./attributes.js";
import { unsampledSpan } from "./sampling-hints.js";
import type { SamplingHints } from "./sampling-hints.js";
import { ATTR_ERROR_TYPE, ATTR_EXCEPTION_MESSAGE } from "./semconv.js";
import { shownKinds } from "../policy/shown-kinds.js";

export interface FanoutTracerOptions {
  /** Default: `trace.getTracer("tailswarm")` (a no-op until an SDK registers a provider). */
  readonly tracer?: Tracer;
  /** The engine's clock, for the time left to a branch's deadline at issue. Default: system clock. */
  readonly clock?: Clock;
  /** Fan-outs kept open at once; beyond this the oldest is ended (guards against a lost onFanoutEnd). */
  readonly maxOpenFanouts?: number;
  /**
   * What the tracer provider's sampler is, so that fan-outs it would not sample start no span at all
   * (the node passes its own; without hints every fan-out span is started and the sampler asked).
   */
  readonly sampling?: SamplingHints;
}

interface OpenFanout {
  readonly span: Span;
  readonly ctx: Context;
  /** The fan-out span records (sampled): its branches get spans of their own. */
  readonly recording: boolean;
  /** A violation event was already added (onViolation). */
  violated: boolean;
  /** The decision's attributes (mode, reason…) are on the span (onDecision). */
  decided: boolean;
  /** The task kind was set (from the first branch request). */
  kindSet: boolean;
}

/** Finite numbers only: OTLP/JSON and Prometheus have no good place for NaN or Infinity. */
function finite(attrs: Attributes, key: string, value: number): void {
  if (Number.isFinite(value)) attrs[key] = value;
}

/**
 * Records a span per fan-out and per branch.
 *
 * @example
 * const tracer = new FanoutTracer();
 * const coordinator = new Coordinator({
 *   transport: instrumentTransport(grpcTransport, { tracer }),
 *   observer: tracer,
 * });
 */
export class FanoutTracer implements FanoutObserver {
  readonly #tracer: Tracer;
  readonly #clock: Clock;
  readonly #max: number;
  readonly #sampling: SamplingHints | undefined;
  readonly #open = new Map<string, OpenFanout>();
  /** Branch spans not yet ended, by branch id (they may outlive their fan-out's span). */
  readonly #branches = new Map<string, Span>();

  constructor(options: FanoutTracerOptions = {}) {
    this.#tracer = options.tracer ?? trace.getTracer(INSTRUMENTATION_SCOPE);
    this.#clock = options.clock ?? systemClock;
    this.#max = options.maxOpenFanouts ?? 10_000;
    this.#sampling = options.sampling;
  }

  /** Fan-out and branch spans still open (for tests and leak checks). */
  get open(): { fanouts: number; branches: number } {
    return { fanouts: this.#open.size, branches: this.#branches.size };
  }

  /**
   * Opens the fan-out span (the engine calls this right after step 7, in the caller's async context,
   * so the span's parent is an incoming RPC's server span when there is one) with the decision.
   */
  onDecision(fanoutId: string, c: Classification, e: FanoutEstimate): void {
    const open = this.#open.get(fanoutId);
    // One attribute pass: a new span gets them at creation (where a sampler can see them); one opened
    // by a violation gets them now; a fan-out the sampler would not sample never builds them.
    if (open === undefined) this.#start(fanoutId, undefined, c, e).decided = true;
    else {
      open.decided = true;
      if (open.span.isRecording()) open.span.setAttributes(decisionAttributes(fanoutId, c, e));
    }
  }

  /**
   * Starts the span of one branch as a child of its fan-out's span and returns the context in which
   * the transport must send it. Called by `instrumentTransport`; a transport may call it directly.
   */
  startBranch(peer: PeerId, req: BranchRequest): Context {
    const open = this.#open.get(req.fanoutId);
    if (open !== undefined && !open.recording) {
      // Not sampled: a child of a non-sampled span is not sampled either (parent-based and ratio
      // samplers decide alike for the whole trace), so no span object per branch and nothing kept for
      // it. The branch goes out in the fan-out's context, whose traceparent tells the peers "not
      // sampled".
      return open.ctx;
    }
    if (open !== undefined && !open.kindSet) {
      open.kindSet = true;
      open.span.setAttribute(ATTR.taskKind, req.task.kind);
    }
    const parent = open?.ctx ?? context.active();
    const span = this.#tracer.startSpan(
      SPAN_BRANCH,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          [ATTR.peer]: peer,
          [ATTR.branchId]: req.branchId,
          [ATTR.branchDeadline]: req.deadline,
          [ATTR.branchDeadlineInMs]: req.deadline - this.#clock.now(),
        },
      },
      parent,
    );
    if (this.#branches.size >= this.#max) this.#evictOldestBranch();
    this.#branches.set(req.branchId, span);
    return trace.setSpan(parent, span);
  }

  /**
   * Ends the branch span with its outcome. A record marked `unsettled` (the fan-out decided before the
   * transport reported) only notes the coordinator's view; the span ends with the settled report,
   * which carries the work the peer really lost — possibly after the fan-out span has ended.
   */
  onBranchEnd(fanoutId: string, record: BranchRecord): void {
    // Most reports are of unsampled fan-outs' branches, which have no span: one lookup when no branch
    // span is open at all.
    let span = this.#branches.size === 0 ? undefined : this.#branches.get(record.branchId);
    if (record.unsettled === true) {
      span?.setAttribute(ATTR.branchOutcome, record.outcome);
      return;
    }
    if (span === undefined) {
      // No span was started for it: a branch of a fan-out that is not recording, or one sent without
      // instrumentTransport, recorded after the fact while its fan-out is open. A report that comes
      // after its fan-out ended without a span (a late branch of an unsampled fan-out) has nothing to
      // record.
      const open = this.#open.get(fanoutId);
      if (open === undefined || !open.recording) return;
      span = this.#tracer.startSpan(
        SPAN_BRANCH,
        {
          kind: SpanKind.CLIENT,
          startTime: Date.now() - record.latencyMs,
          attributes: {
            [ATTR.peer]: record.peer,
            [ATTR.branchId]: record.branchId,
            [ATTR.fanoutId]: fanoutId,
            [ATTR.branchDeadline]: record.deadline,
          },
        },
        open.ctx,
      );
    } else {
      this.#branches.delete(record.branchId);
    }
    endBranchSpan(span, record);
  }

  /**
   * A SpeculationBudgetViolation: an event and the code on the fan-out span. The engine reports a
   * violation it throws to the caller and throws in the same synchronous step, with no onFanoutEnd;
   * a fan-out still open when the current job's microtasks run is therefore ended here, as an error.
   */
  onViolation(fanoutId: string, violation: Error): void {
    const open = this.#open.get(fanoutId) ?? this.#start(fanoutId);
    const c = (violation as { code?: unknown }).code;
    const code = typeof c === "string" ? c : violation.name;
    open.violated = true;
    open.span.addEvent(EVENT_VIOLATION, {
      [ATTR.violationCode]: code,
      [ATTR_EXCEPTION_MESSAGE]: violation.message,
    });
    open.span.setAttribute(ATTR.violationCode, code);
    queueMicrotask(() => {
      if (this.#open.get(fanoutId) !== open) return;
      this.#open.delete(fanoutId);
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: violation.message });
      open.span.setAttribute(ATTR_ERROR_TYPE, code);
      open.span.end();
    });
  }

  onFanoutEnd(outcome: FanoutOutcome): void {
    const open =
      this.#open.get(outcome.fanoutId) ??
      // No start hook ran (e.g. a violation before the decision): record the span after the fact.
      this.#start(outcome.fanoutId, Date.now() - outcome.elapsedMs);
    this.#open.delete(outcome.fanoutId);
    const span = open.span;
    if (!span.isRecording()) {
      span.end();
      return;
    }
    let committed = 0;
    let partial = 0;
    let abandoned = 0;
    let late = 0;
    let failed = 0;
    for (const b of outcome.branches) {
      const o = b.outcome;
      if (o === "committed") committed++;
      else if (o === "partial") partial++;
      else if (o === "abandoned") abandoned++;
      else if (o === "late") late++;
      else failed++;
    }
    // Straight onto the span, no attributes object in between. Mode and reason were set with the
    // decision, unless the span was opened without one (a violation, or no start hook).
    if (!open.decided) {
      const c = outcome.classification;
      span.setAttribute(ATTR.mode, c.mode);
      span.setAttribute(ATTR.reason, c.reason);
    }
    span.setAttribute(ATTR.answered, outcome.answered);
    span.setAttribute(ATTR.lostWorkMs, outcome.abandonCostMs);
    span.setAttribute(ATTR.decisionRelevant, outcome.decisionChanged);
    span.setAttribute(ATTR.degraded, outcome.degraded);
    span.setAttribute(ATTR.deadlineMissed, outcome.deadlineMissed);
    span.setAttribute(ATTR.elapsedMs, outcome.elapsedMs);
    span.setAttribute(ATTR.branchesCommitted, committed);
    span.setAttribute(ATTR.branchesPartial, partial);
    span.setAttribute(ATTR.branchesAbandoned, abandoned);
    span.setAttribute(ATTR.branchesLate, late);
    span.setAttribute(ATTR.branchesFailed, failed);
    const gain = outcome.infoGainPerCommitted;
    if (gain !== null && Number.isFinite(gain)) span.setAttribute(ATTR.infoGainBits, gain);
    if (outcome.violation !== undefined && !open.violated) {
      span.setAttribute(ATTR.violationCode, outcome.violation.code);
      span.addEvent(EVENT_VIOLATION, {
        [ATTR.violationCode]: outcome.violation.code,
        [ATTR_EXCEPTION_MESSAGE]: outcome.violation.message,
      });
    }
    if (outcome.deadlineMissed) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: "decision came after the deadline" });
    }
    span.end();
  }

  /** Trace id of an open fan-out's span (for the flight recorder), or undefined. */
  traceIdOf(fanoutId: string): string | undefined {
    const open = this.#open.get(fanoutId);
    return open?.span.isRecording() === true ? open.span.spanContext().traceId : undefined;
  }

  /** With the decision (`c`, `e`), a new span gets its attributes at creation, where a sampler sees them. */
  #start(fanoutId: string, startTime?: number, c?: Classification, e?: FanoutEstimate): OpenFanout {
    if (this.#open.size >= this.#max) this.#evictOldest();
    const parent = context.active();
    const { span, ctx } =
      unsampledSpan(parent, this.#sampling) ??
      this.#startSpan(
        parent,
        startTime,
        c === undefined || e === undefined
          ? { [ATTR.fanoutId]: fanoutId }
          : decisionAttributes(fanoutId, c, e),
      );
    const open: OpenFanout = {
      span,
      ctx,
      recording: span.isRecording(),
      violated: false,
      decided: false,
      kindSet: false,
    };
    this.#open.set(fanoutId, open);
    return open;
  }

  /** Starts the fan-out's span through the SDK (its sampler decides) and the context it is active in. */
  #startSpan(
    parent: Context,
    startTime: number | undefined,
    attributes: Attributes,
  ): { span: Span; ctx: Context } {
    const span = this.#tracer.startSpan(
      SPAN_FANOUT,
      { kind: SpanKind.INTERNAL, attributes, startTime },
      parent,
    );
    return { span, ctx: trace.setSpan(parent, span) };
  }

  #evictOldestBranch(): void {
    const first = this.#branches.entries().next();
    if (first.done === true) return;
    this.#branches.delete(first.value[0]);
    first.value[1].setAttribute(ATTR.branchOutcome, "unreported");
    first.value[1].end();
  }

  #evictOldest(): void {
    const first = this.#open.entries().next();
    if (first.done === true) return;
    const [id, open] = first.value;
    this.#open.delete(id);
    open.span.setStatus({ code: SpanStatusCode.ERROR, message: "fan-out end never reported" });
    open.span.end();
  }
}

/** The span attributes that explain a fan-out's decision. */
function decisionAttributes(fanoutId: string, c: Classification, e: FanoutEstimate): Attributes {
  const kinds = shownKinds(c, e);
  const a: Attributes = {
    [ATTR.fanoutId]: fanoutId,
    [ATTR.mode]: c.mode,
    [ATTR.reason]: c.reason,
    [ATTR.canFlip]: c.relevant,
    [ATTR.fanoutSize]: e.size,
    [ATTR.requirement]: e.requirement.kind,
    [ATTR.estimateStatus]: e.status,
    [ATTR.estimateMinSamples]: e.minSamples,
    [ATTR.estimateBasis]: e.basis ?? "independent",
    [ATTR.estimateObservedSamples]: e.observedSamples ?? 0,
    [ATTR.fanoutP50Kind]: kinds.p50,
    [ATTR.fanoutP99Kind]: kinds.p99,
  };
  finite(a, ATTR.budgetMs, c.budgetMs);
  finite(a, ATTR.fanoutP50Ms, c.fanoutP50Ms);
  finite(a, ATTR.fanoutP99Ms, c.fanoutP99Ms);
  finite(a, ATTR.abandonCostMs, c.abandonCostMs);
  finite(a, ATTR.estimateAgeMs, e.maxAgeMs);
  finite(a, ATTR.estimateHorizonMs, e.horizonMs ?? Infinity);
  if (e.requirement.kind === "quorum") a[ATTR.quorumK] = e.requirement.k;
  if (e.unknownPeers.length > 0) a[ATTR.estimateUnknownPeers] = [...e.unknownPeers];
  return a;
}

function endBranchSpan(span: Span, r: BranchRecord): void {
  if (span.isRecording()) {
    span.setAttribute(ATTR.branchOutcome, r.outcome);
    span.setAttribute(ATTR.branchLatencyMs, r.latencyMs);
    span.setAttribute(ATTR.branchPivotal, r.decisionRelevant);
    if (r.lostWorkMs > 0) span.setAttribute(ATTR.branchLostWorkMs, r.lostWorkMs);
    const res = r.result;
    if (res.kind === "failed") {
      span.setAttribute(ATTR_ERROR_TYPE, res.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: res.message });
    }
  }
  span.end();
}
