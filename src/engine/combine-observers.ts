/**
 * The one way observers are called: several `FanoutObserver`s behind one whose hooks are always
 * present and never throw. The Coordinator calls its observer through this, telemetry combines its
 * parts with it, and so can an application.
 */
import type { FanoutEstimate } from "../estimate/types.js";
import type { Classification } from "../policy/types.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "./outcome.js";

/**
 * Calls each observer's hook in order. A hook that throws does not stop the others or the fan-out:
 * the error goes to that observer's `onError`, then to `onError` given here. The combination's own
 * `onError` tells every observer, then `onError` given here. A throw from an `onError` is swallowed:
 * nothing is left to tell. The hooks build nothing per call (they run for every fan-out and branch).
 *
 * @example
 * const observer = combineObservers([recorder, tracer, metrics], (error) => log.warn("observer", { error }));
 */
export function combineObservers(
  observers: readonly (FanoutObserver | undefined)[],
  onError?: (error: unknown) => void,
): Required<FanoutObserver> {
  const list = observers.filter((o): o is FanoutObserver => o !== undefined);
  // A combination alone, with no sink to add, already is one: a second layer would only call through.
  if (list.length === 1 && onError === undefined && list[0] instanceof Combined) return list[0];
  return new Combined(list, onError);
}

class Combined implements Required<FanoutObserver> {
  readonly #list: readonly FanoutObserver[];
  readonly #sink: ((error: unknown) => void) | undefined;

  constructor(list: readonly FanoutObserver[], sink: ((error: unknown) => void) | undefined) {
    this.#list = list;
    this.#sink = sink;
  }

  // Arrow properties (made once per combination), so that a hook read off the object still works.
  readonly onDecision = (fanoutId: string, classification: Classification, estimate: FanoutEstimate) => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (o.onDecision === undefined) continue;
      try {
        o.onDecision(fanoutId, classification, estimate);
      } catch (error) {
        this.#fail(o, error);
      }
    }
  };

  readonly onBranchEnd = (fanoutId: string, record: BranchRecord) => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (o.onBranchEnd === undefined) continue;
      try {
        o.onBranchEnd(fanoutId, record);
      } catch (error) {
        this.#fail(o, error);
      }
    }
  };

  readonly onFanoutEnd = (outcome: FanoutOutcome) => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (o.onFanoutEnd === undefined) continue;
      try {
        o.onFanoutEnd(outcome);
      } catch (error) {
        this.#fail(o, error);
      }
    }
  };

  readonly onViolation = (fanoutId: string, violation: Error) => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) {
      const o = list[i]!;
      if (o.onViolation === undefined) continue;
      try {
        o.onViolation(fanoutId, violation);
      } catch (error) {
        this.#fail(o, error);
      }
    }
  };

  readonly onError = (error: unknown) => {
    const list = this.#list;
    for (let i = 0; i < list.length; i++) tell(list[i]!, error);
    this.#toSink(error);
  };

  #fail(o: FanoutObserver, error: unknown): void {
    tell(o, error);
    this.#toSink(error);
  }

  #toSink(error: unknown): void {
    if (this.#sink === undefined) return;
    try {
      this.#sink(error);
    } catch {
      // an error handler that throws has nowhere left to report to
    }
  }
}

/** Gives `error` to the observer's `onError`, swallowing what that throws. */
function tell(o: FanoutObserver, error: unknown): void {
  if (o.onError === undefined) return;
  try {
    o.onError(error);
  } catch {
    // an error handler that throws has nowhere left to report to
  }
}
