/**
 * The coordinators' own event-loop delay during the measured window, read from their status
 * (`event_loop_delay_*`, the last 5–10 s) every `everyMs`: a coordinator whose loop runs 90 ms late
 * misses a 90 ms deadline whatever it decides, so the report shows it beside the policies' deadline
 * misses.
 */
import { NodeClient } from "../node/client.js";
import { round } from "./value-model.js";

export interface LoopDelaySummary {
  /** Median of the readings' p50, and the largest p99 and max seen (ms); null without a reading. */
  readonly p50_ms: number | null;
  readonly p99_ms: number | null;
  readonly max_ms: number | null;
  readonly readings: number;
}

interface Readings {
  p50: number[];
  p99: number;
  max: number;
}

export class CoordinatorLoopPoll {
  readonly #clients: Map<string, NodeClient>;
  readonly #readings = new Map<string, Readings>();
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> | undefined;

  constructor(addresses: ReadonlyMap<string, string>) {
    this.#clients = new Map([...addresses].map(([name, a]) => [name, new NodeClient(a)]));
  }

  /**
   * One status call to each coordinator, not recorded: the first Status a node serves builds its
   * message codecs on first use (so does this process's client): a stall of the coordinator's loop
   * that would otherwise fall in the measured window, at its first poll.
   */
  async prime(): Promise<void> {
    await Promise.all([...this.#clients.values()].map((c) => c.status(2_000).catch(() => undefined)));
  }

  start(everyMs = 2_500): void {
    this.#timer = setInterval(() => void this.#poll(), everyMs);
    this.#timer.unref();
  }

  /** Takes a last reading, stops, and summarises per coordinator. */
  async stop(): Promise<Record<string, LoopDelaySummary>> {
    clearInterval(this.#timer);
    await this.#busy;
    await this.#poll();
    this.close();
    const out: Record<string, LoopDelaySummary> = {};
    for (const name of this.#clients.keys()) {
      const r = this.#readings.get(name);
      const p50 = [...(r?.p50 ?? [])].sort((a, b) => a - b);
      out[name] = {
        p50_ms: p50.length === 0 ? null : round(p50[Math.floor(p50.length / 2)]!, 2),
        p99_ms: r === undefined || !Number.isFinite(r.p99) ? null : round(r.p99, 2),
        max_ms: r === undefined || !Number.isFinite(r.max) ? null : round(r.max, 2),
        readings: p50.length,
      };
    }
    return out;
  }

  /** Stops polling and closes the clients (`stop` does too, after its last reading); idempotent. */
  close(): void {
    clearInterval(this.#timer);
    for (const c of this.#clients.values()) c.close();
  }

  async #poll(): Promise<void> {
    const run = Promise.all(
      [...this.#clients].map(async ([name, client]) => {
        const s = await client.status(2_000).catch(() => undefined);
        if (s === undefined || !Number.isFinite(s.eventLoopDelayP50Ms)) return;
        const r = this.#readings.get(name) ?? { p50: [], p99: -Infinity, max: -Infinity };
        r.p50.push(s.eventLoopDelayP50Ms);
        r.p99 = Math.max(r.p99, s.eventLoopDelayP99Ms);
        r.max = Math.max(r.max, s.eventLoopDelayMaxMs);
        this.#readings.set(name, r);
      }),
    ).then(() => undefined);
    this.#busy = run;
    await run;
  }
}
