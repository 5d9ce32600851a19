import { isSpanContextValid, trace, TraceFlags } from "@opentelemetry/api";
import type { Context, Span } from "@opentelemetry/api";

/**
 * What a fan-out tracer (or a server's RPC spans) may know of the tracer provider's sampler, so that
 * it starts no span the sampler would not sample. Records through @opentelemetry/api only; the node's
 * SDK set-up (src/telemetry/sdk/sampler-from-env.ts) says what its sampler is.
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

/**
 * The span and context to use, without asking the SDK, when the hints say the sampler would not
 * sample a span started under `parent`; undefined when the SDK must decide (no hints, a sampled or
 * recording parent, a root the sampler would start).
 *
 * - Under an unsampled parent with a parent-based sampler: the parent's own context, its span
 *   context wrapped as a non-recording span. What crosses the wire is the same `traceparent`, flag
 *   off, that a new non-recording span would carry, but for its span id.
 * - With no parent, when the sampler declines a new trace now: a non-recording span with a fresh
 *   trace id, flag off, so that the callees still see one trace id per request.
 */
export function unsampledSpan(
  parent: Context,
  hints: SamplingHints | undefined,
): { readonly span: Span; readonly ctx: Context } | undefined {
  if (hints === undefined) return undefined;
  const sc = trace.getSpanContext(parent);
  if (sc === undefined || !isSpanContextValid(sc)) {
    if (hints.declinesRoot?.() !== true) return undefined;
    const span = trace.wrapSpanContext({
      traceId: randomId(16),
      spanId: randomId(8),
      traceFlags: TraceFlags.NONE,
    });
    return { span, ctx: trace.setSpan(parent, span) };
  }
  if (!hints.parentBased || (sc.traceFlags & TraceFlags.SAMPLED) !== 0) return undefined;
  const span = trace.getSpan(parent);
  if (span?.isRecording() === true) return undefined; // recorded, not sampled: ask
  // The parent's own non-recording span (the one extract put there) serves as is.
  return { span: span ?? trace.wrapSpanContext(sc), ctx: parent };
}

const ID_BUFFER = Buffer.allocUnsafe(16);

/** A random W3C trace (16 bytes) or span (8 bytes) id in hex, never all zero (as the SDK makes them). */
function randomId(bytes: 8 | 16): string {
  let zero = true;
  for (let i = 0; i < bytes; i += 4) {
    const word = (Math.random() * 0x1_0000_0000) >>> 0;
    if (word !== 0) zero = false;
    ID_BUFFER.writeUInt32BE(word, i);
  }
  if (zero) ID_BUFFER[bytes - 1] = 1;
  return ID_BUFFER.toString("hex", 0, bytes);
}
