/** Set-up shared by the telemetry tests: a Coordinator over a MemoryTransport on a SimClock, with telemetry. */
import { context, propagation } from "@opentelemetry/api";
import type { Tracer } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { TracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import type { Sampler } from "@opentelemetry/sdk-trace";
import { afterAll, beforeAll } from "vitest";
import { SimClock } from "../../src/clock/sim-clock.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import type { DecisionModel } from "../../src/decision/types.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import type { FanoutObserver } from "../../src/engine/outcome.js";
import type { PeerTransport } from "../../src/engine/transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import type { PeerId } from "../../src/estimate/types.js";

export const START = 1_000_000;

/**
 * For the whole test file: the AsyncLocalStorage context manager and the W3C trace-context propagator
 * as the process's globals, removed after its last test.
 */
export function useAsyncContextAndW3C(): void {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  });
  afterAll(() => {
    context.disable();
    propagation.disable();
  });
}

/**
 * A tracer provider with `sampler` and an in-memory exporter, and a tracer whose `startSpan` calls are
 * counted: a test can tell whether the code under test asked the SDK at all.
 */
export function countingSdk(sampler: Sampler) {
  const exporter = new InMemorySpanExporter();
  const provider = new TracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor({ exporter })] });
  const inner = provider.getTracer("test");
  let started = 0;
  // The SDK's tracer, with its startSpan counted (startActiveSpan is used by none of the callers).
  const tracer: Tracer = Object.create(inner) as Tracer;
  tracer.startSpan = (...args: Parameters<Tracer["startSpan"]>) => {
    started++;
    return inner.startSpan(...args);
  };
  return { provider, exporter, tracer, started: () => started };
}

export interface Rig {
  clock: SimClock;
  transport: MemoryTransport;
  book: LatencyBook;
  coordinator: Coordinator;
  warm(peer: PeerId, ms: number, n?: number): void;
}

/** `wrap` instruments the transport; `observer` receives the engine's hooks. */
export function rig(observer: FanoutObserver, wrap: (t: PeerTransport) => PeerTransport = (t) => t): Rig {
  const clock = new SimClock({ start: START });
  const transport = new MemoryTransport(clock, { seed: 7 });
  const book = new LatencyBook({ windowMs: 60_000, minSamples: 20 }, clock);
  const coordinator = new Coordinator({ transport: wrap(transport), book, clock, observer, nodeId: "coord" });
  const warm = (peer: PeerId, ms: number, n = 100): void => {
    for (let i = 0; i < n; i++) book.record(peer, ms, clock.now());
  };
  return { clock, transport, book, coordinator, warm };
}

/** Every answer matters while anything is outstanding; the action lists the answers. */
export function collectModel(): DecisionModel<string, string> {
  return predicateModel<string, string>({
    name: "collect",
    prior: "none",
    decide: (answers) => [...answers.values()].sort().join(","),
    canFlip: (_answers, outstanding) => outstanding.length > 0,
    parseAnswer: (raw) => {
      if (typeof raw !== "string") throw new Error(`expected a string answer, got ${typeof raw}`);
      return raw;
    },
  });
}

export const task = { kind: "echo", payload: null };
