/**
 * Calls a `FanoutObserver` so that it can never break a fan-out: every hook is optional, every throw
 * is caught and reported to `onError` (whose own throw is swallowed).
 */
import type { FanoutEstimate } from "../estimate/types.js";
import type { Classification } from "../policy/types.js";
import type { BranchRecord, FanoutObserver, FanoutOutcome } from "./outcome.js";

export class SafeObserver {
  readonly #observer: FanoutObserver | undefined;

  constructor(observer: FanoutObserver | undefined) {
    this.#observer = observer;
  }

  decision(fanoutId: string, classification: Classification, estimate: FanoutEstimate): void {
    const o = this.#observer;
    if (o?.onDecision === undefined) return;
    try {
      o.onDecision(fanoutId, classification, estimate);
    } catch (error) {
      this.#report(error);
    }
  }

  branchEnd(fanoutId: string, record: BranchRecord): void {
    const o = this.#observer;
    if (o?.onBranchEnd === undefined) return;
    try {
      o.onBranchEnd(fanoutId, record);
    } catch (error) {
      this.#report(error);
    }
  }

  fanoutEnd(outcome: FanoutOutcome): void {
    const o = this.#observer;
    if (o?.onFanoutEnd === undefined) return;
    try {
      o.onFanoutEnd(outcome);
    } catch (error) {
      this.#report(error);
    }
  }

  violation(fanoutId: string, violation: Error): void {
    const o = this.#observer;
    if (o?.onViolation === undefined) return;
    try {
      o.onViolation(fanoutId, violation);
    } catch (error) {
      this.#report(error);
    }
  }

  #report(error: unknown): void {
    try {
      this.#observer?.onError?.(error);
    } catch {
      // An observer that throws from onError has nowhere left to report to.
    }
  }
}
