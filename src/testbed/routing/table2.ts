/**
 * The Table II metrics of the MABP paper from the request records of one policy — throughput, goodput at
 * the SLO, P95 end-to-end latency, work per request, hit ratio, downstream jobs per request, drops —
 * and the table printed beside the paper's (real multi-GPU LLM system; mechanism and ordering are the
 * bar, not digits).
 */
import { nearestRank } from "../../util/nearest-rank.js";
import type { RequestRecord } from "./run-policy.js";

export interface Table2Row {
  readonly policy: string;
  readonly requests: number;
  readonly throughputPerS: number;
  readonly goodputPerS: number;
  readonly p95E2eMs: number;
  readonly workPerRequest: number;
  readonly hitRatio: number;
  /** Jobs per answered request: its own plus the verifier jobs it created (the paper's scale). */
  readonly jobsPerRequest: number;
  readonly dropRate: number;
  readonly p95RouteUs: number;
}

/** The paper's Table II (means), by our policy names; `random` is not in it. */
export const PAPER_TABLE2: Readonly<Record<string, Partial<Omit<Table2Row, "policy" | "requests">>>> = {
  jsq: {
    throughputPerS: 6.05,
    goodputPerS: 2.25,
    p95E2eMs: 2050,
    workPerRequest: 0.994,
    hitRatio: 0.884,
    jobsPerRequest: 1.278,
    dropRate: 0,
    p95RouteUs: 38.64,
  },
  bp: {
    throughputPerS: 6.04,
    goodputPerS: 2.41,
    p95E2eMs: 2180,
    workPerRequest: 0.993,
    hitRatio: 0.884,
    jobsPerRequest: 1.268,
    dropRate: 0,
    p95RouteUs: 31.68,
  },
  affinity: {
    throughputPerS: 6.14,
    goodputPerS: 2.61,
    p95E2eMs: 1940,
    workPerRequest: 0.985,
    hitRatio: 0.972,
    jobsPerRequest: 1.179,
    dropRate: 0,
    p95RouteUs: 42.93,
  },
  mabp: {
    throughputPerS: 6.21,
    goodputPerS: 2.82,
    p95E2eMs: 1930,
    workPerRequest: 0.965,
    hitRatio: 0.998,
    jobsPerRequest: 1.056,
    dropRate: 0,
    p95RouteUs: 33.74,
  },
};

/** Metrics over the measured requests; `durationS` is the measured window. */
export function table2Row(
  policy: string,
  records: readonly RequestRecord[],
  durationS: number,
  sloMs: number,
): Table2Row {
  const m = records.filter((r) => r.measured);
  const answered = m.filter((r) => r.outcome === "answered");
  const e2e = answered.map((r) => r.e2eMs).sort((a, b) => a - b);
  const route = m.map((r) => r.routeUs).sort((a, b) => a - b);
  const n = Math.max(1, answered.length);
  return {
    policy,
    requests: m.length,
    throughputPerS: answered.length / durationS,
    goodputPerS: answered.filter((r) => r.e2eMs <= sloMs).length / durationS,
    p95E2eMs: nearestRank(e2e, 0.95) ?? NaN,
    workPerRequest: answered.reduce((s, r) => s + r.work, 0) / n,
    hitRatio: answered.filter((r) => r.hit).length / n,
    jobsPerRequest: 1 + answered.reduce((s, r) => s + r.downstream, 0) / n,
    dropRate: m.length === 0 ? 0 : (m.length - answered.length) / m.length,
    p95RouteUs: nearestRank(route, 0.95) ?? NaN,
  };
}

const COLUMNS: readonly [keyof Omit<Table2Row, "policy" | "requests">, string, number][] = [
  ["throughputPerS", "throughput req/s", 2],
  ["goodputPerS", "goodput@SLO req/s", 2],
  ["p95E2eMs", "P95 E2E ms", 0],
  ["workPerRequest", "work/request", 3],
  ["hitRatio", "hit ratio", 3],
  ["jobsPerRequest", "jobs/request", 3],
  ["dropRate", "drop %", 2],
  ["p95RouteUs", "P95 route µs", 1],
];

/** Rows × metrics, ours | paper (the paper's work is GPU seconds per request, its hit ratio KV hits). */
export function formatTable2(rows: readonly Table2Row[], sloMs: number): string {
  const lines = [
    `Table II — agentic-context, live processes (ours | paper; goodput at SLO ${sloMs} ms; paper: GPU s/request, KV hit ratio, drops %)`,
    "",
    ["metric".padEnd(20), ...rows.map((r) => r.policy.padEnd(22))].join(""),
  ];
  for (const [key, label, digits] of COLUMNS) {
    const cells = rows.map((r) => {
      const ours = key === "dropRate" ? r[key] * 100 : r[key];
      const paper = PAPER_TABLE2[r.policy.split("@")[0]!]?.[key];
      const p = paper === undefined ? "—" : String(paper);
      return `${Number.isFinite(ours) ? ours.toFixed(digits) : "n/a"} | ${p}`.padEnd(22);
    });
    lines.push([label.padEnd(20), ...cells].join(""));
  }
  lines.push(["requests".padEnd(20), ...rows.map((r) => String(r.requests).padEnd(22))].join(""));
  return lines.join("\n");
}
