/**
 * What a fan-out tracer may know of the tracer provider's sampler, so that it starts no span the
 * sampler would not sample. Records through @opentelemetry/api only; the node's SDK set-up
 * (src/telemetry/sdk/sampler-from-env.ts) says what its sampler is.
 */
export interface SamplingHints {
  /**
   * The sampler follows the parent's decision (OpenTelemetry's ParentBased with its default delegates):
   * a fan-out under an unsampled span is not sampled, so the tracer starts no span for it and sends its
   * branches in the parent's context — the same `traceparent`, flag off, that the span would have
   * carried, but for its span id.
   */
  readonly parentBased: boolean;
  /**
   * For a fan-out with no parent span: true when the sampler would not start a new trace now (and has
   * counted it as not started). The tracer then starts no span: the branches carry a fresh trace id
   * with the sampled flag off. False: the tracer starts the span, and the sampler decides as usual.
   */
  readonly declinesRoot?: () => boolean;
}
