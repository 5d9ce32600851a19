/** Shared set-up of the engine tests: a SimClock, a MemoryTransport, a real LatencyBook, an observer that records. */
import { SimClock } from "../../src/clock/sim-clock.js";
import { predicateModel } from "../../src/decision/predicate-model.js";
import type { DecisionModel } from "../../src/decision/types.js";
import type { AbandonLedger, AbandonLedgerOptions } from "../../src/engine/abandon-ledger.js";
import { Coordinator } from "../../src/engine/coordinator.js";
import type { CoordinatorOptions } from "../../src/engine/coordinator.js";
import { MemoryTransport } from "../../src/engine/memory-transport.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "../../src/engine/outcome.js";
import type { PeerTransport } from "../../src/engine/transport.js";
import { LatencyBook } from "../../src/estimate/latency-book.js";
import type { FanoutEstimate, PeerId } from "../../src/estimate/types.js";
import type { Classification } from "../../src/policy/types.js";

export const START = 1_000_000;

export interface Recorded {
  decisions: Array<{ fanoutId: string; classification: Classification; estimate: FanoutEstimate }>;
  branches: Array<{ fanoutId: string; record: BranchRecord }>;
  ends: FanoutOutcome[];
  violations: Error[];
  errors: unknown[];
}

export function recordingObserver(): { observer: FanoutObserver; seen: Recorded } {
  const seen: Recorded = { decisions: [], branches: [], ends: [], violations: [], errors: [] };
  const observer: FanoutObserver = {
    onDecision: (fanoutId, classification, estimate) =>
      seen.decisions.push({ fanoutId, classification, estimate }),
    onBranchEnd: (fanoutId, record) => seen.branches.push({ fanoutId, record }),
    onFanoutEnd: (outcome) => seen.ends.push(outcome),
    onViolation: (_id, violation) => seen.violations.push(violation),
    onError: (error) => seen.errors.push(error),
  };
  return { observer, seen };
}

export interface Harness {
  clock: SimClock;
  transport: MemoryTransport;
  book: LatencyBook;
  /** The ledger of the default policy (p99-boundary), the one the fan-outs of these tests decide with. */
  readonly ledger: AbandonLedger;
  coordinator: Coordinator;
  seen: Recorded;
  /** Records `n` samples for `peer` cycling through `latencies` so its estimate is fresh. */
  warm(peer: PeerId, latencies: number | readonly number[], n?: number): void;
}

export function harness(
  options: {
    ledger?: AbandonLedgerOptions;
    transport?: PeerTransport;
    coordinator?: Partial<CoordinatorOptions>;
  } = {},
): Harness {
  const clock = new SimClock({ start: START });
  const transport = new MemoryTransport(clock, { seed: 42 });
  const book = new LatencyBook({ windowMs: 60_000, minSamples: 20 }, clock);
  const { observer, seen } = recordingObserver();
  const coordinator = new Coordinator({
    transport: options.transport ?? transport,
    book,
    clock,
    ...(options.ledger !== undefined && { ledger: options.ledger }),
    observer,
    nodeId: "coordinator-1",
    ...options.coordinator,
  });
  const warm = (peer: PeerId, latencies: number | readonly number[], n = 100): void => {
    const list = typeof latencies === "number" ? [latencies] : latencies;
    for (let i = 0; i < n; i++) book.record(peer, list[i % list.length] ?? 0, clock.now());
  };
  return {
    clock,
    transport,
    book,
    get ledger() {
      return coordinator.ledgers.of("p99-boundary");
    },
    coordinator,
    seen,
    warm,
  };
}

/** A model that can flip while anything is outstanding: every answer matters until all are in. */
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

export function recordOf(outcome: FanoutOutcome, peer: PeerId): BranchRecord {
  const r = outcome.branches.find((b) => b.peer === peer);
  if (r === undefined) throw new Error(`no branch to ${peer}`);
  return r;
}
