/**
 * `tailswarm sim`'s report: our Table I beside the paper's, the Proposition 3 gaps, the β/ν/skew sweeps,
 * and the charts (src/sim/report-charts.ts). Pure: returns the JSON object, the text and the SVG files; the CLI writes them.
 */
import { DEFAULT_PARAMS, GRIDS, type SimParams } from "./params.js";
import { PAPER_PROP3, PAPER_SWEEPS, PAPER_TABLE1 } from "./paper.js";
import { EXTRA_POLICIES, TABLE1_POLICIES, type SimPolicyName } from "./policies.js";
import { separationGap } from "./separation.js";
import { simCharts } from "./report-charts.js";
import { atLoad, scanLoads, summarise } from "./sweep.js";

export type SimWorkloadName = "mixed" | "separation" | "all";

export interface SimReportOptions {
  readonly workload: SimWorkloadName;
  readonly seeds: readonly number[];
  /** Fewer loads, sweep points and policies: seconds, not minutes. */
  readonly quick: boolean;
  readonly horizon?: number;
  readonly progress?: (message: string) => void;
}

export interface Table1Row {
  stable_load: number;
  stable_load_sd: number;
  penalty: number;
  penalty_sd: number;
  p95_delay: number;
  p95_delay_sd: number;
  hit_ratio: number;
  hit_ratio_sd: number;
  churn: number;
  churn_sd: number;
  work_per_unit: number;
  downstream_per_request: number;
  mean_backlog: number;
  stable_at_rho0: number;
}

export interface SimReport {
  meta: Record<string, unknown>;
  table1: Record<string, Table1Row>;
  extras: Record<string, Table1Row>;
  prop3: Record<string, number>;
  prop3_bound: Record<string, number>;
  sweeps: {
    load: Record<string, [number, number][]>;
    beta: {
      beta: number;
      mabp_penalty: number;
      costbp_penalty: number;
      penalty_gain_pct: number;
      p95_gain_pct: number;
      mabp_hit: number;
    }[];
    nu: { nu: number; penalty: number; mean_backlog: number }[];
    skew: { skew: number; penalty_gain_pct: number }[];
  };
  paper: { table1: typeof PAPER_TABLE1; prop3: typeof PAPER_PROP3; sweeps: typeof PAPER_SWEEPS };
}

export function buildSimReport(o: SimReportOptions): { report: SimReport; charts: Record<string, string> } {
  const log = o.progress ?? (() => undefined);
  const horizon = o.horizon ?? DEFAULT_PARAMS.horizon;
  const base: Partial<SimParams> = { horizon };
  const loads = o.quick ? [0.2, 0.4, 0.6, 0.8, 1.0, 1.2] : GRIDS.load;
  const betas = o.quick ? [0.05, 0.25, 0.5] : GRIDS.beta;
  const report: SimReport = {
    meta: {
      params: { ...DEFAULT_PARAMS, horizon },
      seeds: o.seeds,
      quick: o.quick,
      workload: o.workload,
      loads,
      normalisation:
        "load 1.0 = total compute / expected work of a request whose memory-eligible stages all hit (the memory-assisted reference)",
    },
    table1: {},
    extras: {},
    prop3: {},
    prop3_bound: {},
    sweeps: { load: {}, beta: [], nu: [], skew: [] },
    paper: { table1: PAPER_TABLE1, prop3: PAPER_PROP3, sweeps: PAPER_SWEEPS },
  };

  if (o.workload !== "separation") {
    const policies: SimPolicyName[] = [...TABLE1_POLICIES, ...(o.quick ? [] : EXTRA_POLICIES)];
    for (const name of policies) {
      log(`mixed: ${name} over loads ${loads.join(",")}`);
      const scan = scanLoads(name, loads, o.seeds, base);
      const fixed = atLoad(name, o.seeds, { ...base, load: DEFAULT_PARAMS.load });
      const stable = summarise(scan.stableLoads);
      const row: Table1Row = {
        stable_load: stable.mean,
        stable_load_sd: stable.sd,
        penalty: fixed.penalty.mean,
        penalty_sd: fixed.penalty.sd,
        p95_delay: fixed.p95Delay.mean,
        p95_delay_sd: fixed.p95Delay.sd,
        hit_ratio: fixed.hitRatio.mean,
        hit_ratio_sd: fixed.hitRatio.sd,
        churn: fixed.churn.mean,
        churn_sd: fixed.churn.sd,
        work_per_unit: fixed.workPerUnit.mean,
        downstream_per_request: fixed.downstreamPerRequest.mean,
        mean_backlog: fixed.meanBacklog.mean,
        stable_at_rho0: fixed.stableFraction,
      };
      (TABLE1_POLICIES.includes(name) ? report.table1 : report.extras)[name] = row;
      report.sweeps.load[name] = scan.backlogByLoad;
    }
    const sweepSeeds = o.quick ? o.seeds.slice(0, 1) : o.seeds;
    for (const beta of betas) {
      log(`mixed: beta ${beta}`);
      const m = atLoad("MABP", sweepSeeds, { ...base, beta });
      const c = atLoad("Cost-BP", sweepSeeds, { ...base, beta });
      report.sweeps.beta.push({
        beta,
        mabp_penalty: m.penalty.mean,
        costbp_penalty: c.penalty.mean,
        penalty_gain_pct: (100 * (c.penalty.mean - m.penalty.mean)) / c.penalty.mean,
        p95_gain_pct: (100 * (c.p95Delay.mean - m.p95Delay.mean)) / c.p95Delay.mean,
        mabp_hit: m.hitRatio.mean,
      });
    }
    if (!o.quick) {
      for (const nu of GRIDS.nu) {
        log(`mixed: nu ${nu}`);
        const m = atLoad("MABP", sweepSeeds, { ...base, nu });
        report.sweeps.nu.push({ nu, penalty: m.penalty.mean, mean_backlog: m.meanBacklog.mean });
      }
      for (const skew of GRIDS.skew) {
        log(`mixed: skew ${skew}`);
        const m = atLoad("MABP", sweepSeeds, { ...base, skew });
        const c = atLoad("Cost-BP", sweepSeeds, { ...base, skew });
        report.sweeps.skew.push({
          skew,
          penalty_gain_pct: (100 * (c.penalty.mean - m.penalty.mean)) / c.penalty.mean,
        });
      }
    }
  }

  if (o.workload !== "mixed") {
    log("separation: Proposition 3");
    for (const K of o.quick ? [1, 4, 8, 16] : GRIDS.K) {
      report.prop3[String(K)] = separationGap(
        {
          K,
          nu: DEFAULT_PARAMS.nu,
          load: DEFAULT_PARAMS.load,
          horizon,
          warmupFraction: DEFAULT_PARAMS.warmupFraction,
        },
        o.seeds,
      );
      report.prop3_bound[String(K)] = (K - 1) / 2;
    }
  }
  return { report, charts: simCharts(report, betas) };
}

const DIFFERENCES = [
  "Their simulator is not public; orderings and mechanisms are the bar, not their digits. Where we differ:",
  "- Load normalisation: ρ = 1 is the compute of a request whose memory-eligible stages all hit (our",
  "  reading of their ρ_occ ≈ 0.95–1.09); absolute stable loads depend on it.",
  "- Memory budget: B_i = β × the whole catalog footprint (every object is eligible everywhere), so",
  "  passive LRU hits under Zipf(1) are high (~0.6) where the paper reports 0.05–0.10; MABP's hits near 1.",
  "- Penalty = 1 on a hit and K on a miss (verify 2) per served unit plus transfer 0.1 per hop; absolute",
  "  penalties are lower than the paper's (~3.1–3.9) because our hit ratios are higher.",
  "- Churn = insertions + evictions per served unit (the paper does not define its unit).",
  "- Queues are advertised per (class, stage); state types enter through memory signatures only.",
  "- No GNN scheduler and no Oracle-Sur rows; migration/replication of objects is not simulated",
  "  (migrationCost is carried in the parameters but unused).",
];

export function formatReport(r: SimReport): string {
  const lines: string[] = [];
  const n2 = (x: number): string => (Number.isFinite(x) ? x.toFixed(2) : "n/a");
  const pm = (m: number, s: number): string => `${n2(m)}±${n2(s)}`;
  if (Object.keys(r.table1).length > 0) {
    lines.push("Table I — mixed RAG–MoE–agentic workload (ours | paper). Stable load over the load grid;");
    lines.push("other metrics at ρ0 = 0.85, mean ± sd over seeds " + JSON.stringify(r.meta.seeds) + ".");
    lines.push("");
    const head = ["policy", "stable load", "penalty", "P95 delay", "hit ratio", "churn"];
    lines.push(head.map((h, i) => (i === 0 ? h.padEnd(16) : h.padStart(27))).join(""));
    const rows = { ...r.table1, ...r.extras };
    for (const [name, row] of Object.entries(rows)) {
      const p = PAPER_TABLE1[name];
      const cell = (ours: string, paper: number | undefined): string =>
        `${ours} | ${paper === undefined ? "—" : String(paper)}`.padStart(27);
      lines.push(
        (name + (name in r.table1 ? "" : " *")).padEnd(16) +
          cell(pm(row.stable_load, row.stable_load_sd), p?.stable_load) +
          cell(pm(row.penalty, row.penalty_sd), p?.penalty) +
          cell(pm(row.p95_delay, row.p95_delay_sd), p?.p95_delay) +
          cell(pm(row.hit_ratio, row.hit_ratio_sd), p?.hit_ratio) +
          cell(pm(row.churn, row.churn_sd), p?.churn),
      );
    }
    if (Object.keys(r.extras).length > 0)
      lines.push("  * not in the paper's Table I (Affinity baseline; Learn-MABP is its Fig. 6 ablation).");
    lines.push("");
    if (r.sweeps.beta.length > 0) {
      lines.push("MABP penalty gain over Cost-BP vs β (paper: 10.2% → 17.6% over β):");
      lines.push(
        "  " +
          r.sweeps.beta
            .map((b) => `β=${b.beta}: ${n2(b.penalty_gain_pct)}% (hit ${n2(b.mabp_hit)})`)
            .join("  "),
      );
    }
    if (r.sweeps.skew.length > 0) {
      lines.push("MABP penalty gain over Cost-BP vs skew (paper: 12.2% → 16.5%):");
      lines.push("  " + r.sweeps.skew.map((s) => `s=${s.skew}: ${n2(s.penalty_gain_pct)}%`).join("  "));
    }
    if (r.sweeps.nu.length > 0) {
      lines.push("MABP vs ν (paper: penalty 3.24 → 3.02, mean backlog 209.4 → 335.6 for ν 0 → 20):");
      lines.push(
        "  " +
          r.sweeps.nu.map((s) => `ν=${s.nu}: pen ${n2(s.penalty)} backlog ${n2(s.mean_backlog)}`).join("  "),
      );
    }
    lines.push("");
  }
  if (Object.keys(r.prop3).length > 0) {
    lines.push("Proposition 3 — BP-minus-MABP one-step penalty gap on the paired separation instance:");
    lines.push("  K".padEnd(6) + "ours".padStart(10) + "paper".padStart(10) + "bound (K−1)/2".padStart(16));
    for (const [K, gap] of Object.entries(r.prop3)) {
      const paper = PAPER_PROP3[K];
      lines.push(
        `  ${K}`.padEnd(6) +
          n2(gap).padStart(10) +
          (paper === undefined ? "—" : paper === 0 ? "≈0" : n2(paper)).padStart(10) +
          n2(r.prop3_bound[K]!).padStart(16),
      );
    }
    lines.push("");
  }
  lines.push(...DIFFERENCES);
  return lines.join("\n") + "\n";
}
