/**
 * One call that wires a coordinator's telemetry: the fan-out tracer, the metrics, the flight recorder
 * and the transport wrapper that gives the mesh each branch span's context to send the branch in;
 * with `routing`, the routing attributes of each branch span and the per-peer routing instruments.
 * Records through @opentelemetry/api only: without an SDK (src/telemetry/sdk) it costs almost nothing.
 */
import { metrics as otelMetrics } from "@opentelemetry/api";
import type { Meter, Tracer } from "@opentelemetry/api";
import { systemClock } from "../clock/clock.js";
import type { Clock } from "../clock/clock.js";
import { combineObservers } from "../engine/combine-observers.js";
import type { FanoutObserver } from "../engine/outcome.js";
import type { PeerTransport } from "../engine/transport.js";
import { FanoutTracer } from "./fanout-tracer.js";
import { FlightRecorder } from "./flight-recorder.js";
import { instrumentTransport } from "./instrument-transport.js";
import { FanoutMetrics } from "./metrics.js";
import type { EstimateSource } from "./peer-gauges.js";
import { RoutingGauges, routeSpanTransport } from "./routing-telemetry.js";
import type { RoutingTelemetrySource } from "./routing-telemetry.js";
import type { SamplingHints } from "./sampling-hints.js";
import { INSTRUMENTATION_SCOPE } from "./attributes.js";

export interface TelemetryOptions {
  /** Spans per fan-out and branch. Default true. */
  readonly tracing?: boolean;
  /** Metrics. Default true. */
  readonly metrics?: boolean;
  /** Decisions kept by the flight recorder; 0 disables it. Default 256. */
  readonly recorderCapacity?: number;
  readonly tracer?: Tracer;
  readonly meter?: Meter;
  /** The engine's clock. Default: system clock. */
  readonly clock?: Clock;
  /** The estimator, for the per-peer gauges (settable later with `metrics.setEstimateSource`). */
  readonly estimates?: EstimateSource;
  /** Window of the commit-ratio gauges, ms. Default 60 s. */
  readonly ratioWindowMs?: number;
  /**
   * What the tracer provider's sampler is (the node's SDK set-up gives `sdk.sampling`): fan-outs it
   * would not sample then start no span at all. Default: none, every fan-out span is started.
   */
  readonly sampling?: SamplingHints;
  /**
   * The routing in front of the transport (a node's, when `routing.policy` is not none): each branch
   * span then carries `tailswarm.route.*`, and the per-peer routing instruments read its views.
   */
  readonly routing?: RoutingTelemetrySource;
}

export interface Telemetry {
  /** Give this to the Coordinator as its observer (combine it with yours through combineObservers). */
  readonly observer: FanoutObserver;
  /** Wrap the coordinator's transport with this. */
  wrapTransport(transport: PeerTransport): PeerTransport;
  readonly tracer: FanoutTracer | undefined;
  readonly metrics: FanoutMetrics | undefined;
  readonly recorder: FlightRecorder | undefined;
  /** Stops the observable callbacks. */
  close(): void;
}

/**
 * @example
 * const telemetry = createTelemetry({ estimates: latencyBook });
 * const coordinator = new Coordinator({
 *   transport: telemetry.wrapTransport(grpcTransport),
 *   observer: telemetry.observer,
 * });
 * telemetry.recorder?.last(10);
 */
export function createTelemetry(options: TelemetryOptions = {}): Telemetry {
  const clock = options.clock;
  const tracer =
    options.tracing === false
      ? undefined
      : new FanoutTracer({ tracer: options.tracer, clock, sampling: options.sampling });
  const metrics =
    options.metrics === false
      ? undefined
      : new FanoutMetrics({
          meter: options.meter,
          clock,
          estimates: options.estimates,
          ratioWindowMs: options.ratioWindowMs,
        });
  const capacity = options.recorderCapacity ?? 256;
  const recorder =
    capacity > 0
      ? new FlightRecorder({ capacity, clock, traceIdOf: tracer && ((id) => tracer.traceIdOf(id)) })
      : undefined;
  const routing = options.routing;
  const routingGauges =
    metrics === undefined || routing === undefined
      ? undefined
      : new RoutingGauges(
          options.meter ?? otelMetrics.getMeter(INSTRUMENTATION_SCOPE),
          clock ?? systemClock,
          routing.views,
        );
  // The recorder runs before the tracer so that it can read the trace id of the span still open.
  const observer = combineObservers([recorder, tracer, metrics]);
  return {
    observer,
    // The routing attributes go on the branch span, so inside instrumentTransport (which gives its context).
    wrapTransport: (t) =>
      instrumentTransport(
        tracer === undefined || routing === undefined ? t : routeSpanTransport(t, routing),
        {
          tracer,
          metrics,
        },
      ),
    tracer,
    metrics,
    recorder,
    close: () => {
      metrics?.close();
      routingGauges?.close();
    },
  };
}
