/**
 * The deadline misses of each policy at each coordinator, by mode, and every missed call with where its
 * time went on the coordinator (its reply's `timing`): which requests miss and why. A call that failed
 * at the caller (mode `error`) has no reply and so no timing; `late_ms` is the caller's own view.
 * `never` degrades at once, so its misses are the machine's floor: `never_missed_too` counts a policy's
 * misses whose request `never` missed as well (the same request, its copy sent moments apart).
 */
import type { CallRecord } from "./records.js";
import { round } from "./value-model.js";

export interface MissRow {
  readonly request: number;
  /** The request's time, s since the measured run started. */
  readonly t_s: number;
  /** speculate | synchronous | degrade | error */
  readonly mode: string;
  /** gRPC status name of a failed call. */
  readonly code?: string;
  /** The caller's round trip past its budget, ms (negative: the coordinator flagged its own miss). */
  readonly late_ms: number;
  readonly decided_budget_ms: number | null;
  readonly arrival_left_ms: number | null;
  readonly reserve_ms: number | null;
  /** The reserve wanted: the transit (`deadlineReserveMs`) + `reserve_overhead_ms` + `reserve_loop_ms`. */
  readonly reserve_wanted_ms: number | null;
  /** The measured decide-and-reply overhead p99 (or the largest seen) in the wanted reserve. */
  readonly reserve_overhead_ms: number | null;
  /** The event loop's lateness in the wanted reserve. */
  readonly reserve_loop_ms: number | null;
  readonly queued_ms: number | null;
  readonly decide_ms: number | null;
  readonly wait_ms: number | null;
  readonly reply_ms: number | null;
}

export interface DeadlineMisses {
  readonly fanouts: number;
  readonly misses: number;
  readonly by_mode: Readonly<Record<string, number>>;
  /**
   * Calls whose fan-out ended after the coordinator's own deadline (the caller's less the reply reserve),
   * whether or not the reply still came in time: what the report counted as misses before it took the
   * caller's view.
   */
  readonly fanout_overran: number;
  /**
   * Calls whose fan-out ran but no peer answered (all cut at the deadline, or failed), answered with
   * the prior (in time or not).
   */
  readonly no_answer: number;
  /** Of `misses`, those whose request `never` missed too at the same coordinator; null without `never`. */
  readonly never_missed_too: number | null;
  readonly calls: readonly MissRow[];
}

/** policy → coordinator → its misses. */
export function deadlineMisses(calls: readonly CallRecord[]): Record<string, Record<string, DeadlineMisses>> {
  const out: Record<
    string,
    Record<
      string,
      {
        fanouts: number;
        fanout_overran: number;
        no_answer: number;
        by_mode: Record<string, number>;
        calls: MissRow[];
      }
    >
  > = {};
  for (const c of calls) {
    const cell = ((out[c.policy] ??= {})[c.coordinator] ??= {
      fanouts: 0,
      fanout_overran: 0,
      no_answer: 0,
      by_mode: {},
      calls: [],
    });
    cell.fanouts++;
    if (c.fanoutOverran === true) cell.fanout_overran++;
    if (c.noAnswer === true) cell.no_answer++;
    if (!c.deadlineMissed) continue;
    const row = missRow(c);
    cell.by_mode[row.mode] = (cell.by_mode[row.mode] ?? 0) + 1;
    cell.calls.push(row);
  }
  const never = out.never;
  return Object.fromEntries(
    Object.entries(out).map(([p, byCoord]) => [
      p,
      Object.fromEntries(
        Object.entries(byCoord).map(([coord, x]) => {
          const floor = never?.[coord];
          const both =
            floor === undefined
              ? null
              : x.calls.filter((m) => floor.calls.some((n) => n.request === m.request)).length;
          return [coord, { ...x, misses: x.calls.length, never_missed_too: both }];
        }),
      ),
    ]),
  );
}

function missRow(c: CallRecord): MissRow {
  const t = c.timing;
  const ms = (x: number | undefined): number | null => (x === undefined ? null : round(x, 2));
  return {
    request: c.request,
    t_s: round(c.t / 1000, 2),
    mode: c.ok ? (c.mode ?? "degrade") : "error",
    ...(c.code !== undefined && { code: c.code }),
    late_ms: round(c.rttMs - c.budgetMs, 2),
    decided_budget_ms: ms(c.decidedBudgetMs),
    arrival_left_ms: ms(t?.arrivalLeftMs),
    reserve_ms: ms(t?.reserveMs),
    reserve_wanted_ms: ms(t?.reserveWantedMs),
    reserve_overhead_ms: ms(t?.reserveOverheadMs),
    reserve_loop_ms: ms(t?.reserveLoopMs),
    queued_ms: ms(t?.queuedMs),
    decide_ms: ms(t?.decideMs),
    wait_ms: ms(t?.waitMs),
    reply_ms: ms(t?.replyMs),
  };
}

/** One line per policy at `coordinator`: misses of fan-outs, by mode. */
export function missLines(
  m: Record<string, Record<string, DeadlineMisses>>,
  coordinator: string,
  policies: readonly string[],
): string[] {
  const out: string[] = [];
  for (const p of policies) {
    const x = m[p]?.[coordinator];
    if (x === undefined) continue;
    const modes = Object.entries(x.by_mode)
      .map(([mode, n]) => `${mode} ${n}`)
      .join(", ");
    const share = x.fanouts === 0 ? "n/a" : `${((100 * x.misses) / x.fanouts).toFixed(1)}%`;
    const floor =
      x.never_missed_too === null || p === "never" ? "" : `; never missed ${x.never_missed_too} of these too`;
    const overran = x.fanout_overran === 0 ? "" : `; ${x.fanout_overran} fan-out(s) ran past the reserve`;
    const prior = x.no_answer === 0 ? "" : `; ${x.no_answer} answered with the prior (no peer answered)`;
    out.push(
      `  ${p.padEnd(14)} ${coordinator}  ${x.misses} of ${x.fanouts} (${share})${modes === "" ? "" : `: ${modes}`}${floor}${overran}${prior}`,
    );
  }
  return out;
}
