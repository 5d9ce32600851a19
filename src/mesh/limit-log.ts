import type { LimitListener } from "../engine/limit-listener.js";

/**
 * Reports a limit that triggered, at most once per `intervalMs` per limit: the first event of an
 * interval goes out at once, later ones are counted and the count rides on the next report
 * (`suppressed`), so an attack of a million refused sockets is a line a second, not a million lines.
 */
export class LimitLog {
  readonly #listener: LimitListener | undefined;
  readonly #intervalMs: number;
  readonly #last = new Map<string, { at: number; suppressed: number }>();

  constructor(listener: LimitListener | undefined, intervalMs = 1_000) {
    this.#listener = listener;
    this.#intervalMs = intervalMs;
  }

  report(limit: string, fields: Record<string, unknown>, now = Date.now()): void {
    if (this.#listener === undefined) return;
    const last = this.#last.get(limit);
    if (last !== undefined && now - last.at < this.#intervalMs) {
      last.suppressed++;
      return;
    }
    const suppressed = last?.suppressed ?? 0;
    this.#last.set(limit, { at: now, suppressed: 0 });
    this.#listener(limit, suppressed > 0 ? { ...fields, suppressed } : fields);
  }
}
