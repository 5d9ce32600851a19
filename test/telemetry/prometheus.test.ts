/**
 * A real Prometheus (Debian's `prometheus`, /usr/bin/prometheus; scripts/ensure-prometheus.sh installs
 * it) scrapes the Prometheus endpoint of a process running fan-outs with the telemetry SDK; the test
 * asks Prometheus's HTTP API for the `tailswarm` series. It scrapes the same endpoint a second time,
 * as job `collector`, through a proxy that renames the series as the OpenTelemetry Collector's
 * Prometheus exporter would (collector-names.ts), so that every dashboard query is run against both.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { createServer } from "node:http";
import type { Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { predicateModel } from "../../src/decision/predicate-model.js";
import type { PeerTransport } from "../../src/engine/transport.js";
import { startTelemetry } from "../../src/telemetry/sdk/setup.js";
import { freePorts } from "../../src/testbed/free-port.js";
import type { TelemetrySdk } from "../../src/telemetry/sdk/setup.js";
import { createTelemetry } from "../../src/telemetry/telemetry.js";
import type { Telemetry } from "../../src/telemetry/telemetry.js";
import { collectModel, rig, task } from "./helpers.js";
import { requireBackend } from "../support/backend.js";
import { rewriteExposition } from "./collector-names.js";

const PROMETHEUS = "/usr/bin/prometheus";
const have = requireBackend(
  "prometheus",
  existsSync(PROMETHEUS),
  "apt-get install prometheus (npm test does it when run as root)",
);

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

let sdk: TelemetrySdk;
let telemetry: Telemetry;
let prom: ChildProcess | undefined;
let collector: Server | undefined;
let dir = "";
let api = "";

async function query(q: string): Promise<Sample[]> {
  const res = await fetch(`${api}/api/v1/query?query=${encodeURIComponent(q)}`);
  const body = (await res.json()) as { status: string; data: { result: Sample[] } };
  expect(body.status).toBe("success");
  return body.data.result;
}

/** Polls `q` until it returns series (Prometheus scrapes every 500 ms). */
async function until(q: string, timeoutMs = 20_000): Promise<Sample[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = await query(q);
    if (r.length > 0 || Date.now() > end) return r;
    await new Promise((ok) => setTimeout(ok, 250));
  }
}

describe.skipIf(!have)("Prometheus scrapes a node's tailswarm metrics", () => {
  beforeAll(async () => {
    sdk = await startTelemetry({
      serviceName: "tailswarm-prom-test",
      prometheusPort: 0,
      prometheusHost: "127.0.0.1",
      env: { OTEL_TRACES_EXPORTER: "none", OTEL_METRICS_EXPORTER: "none" },
    });
    // the engine on a simulated clock: the same decisions on a loaded machine as on an idle one
    const h = rig(
      {
        onBranchEnd: (id, r) => obs.onBranchEnd?.(id, r),
        onFanoutEnd: (o) => obs.onFanoutEnd?.(o),
        onViolation: (id, v) => obs.onViolation?.(id, v),
      },
      (t) => ({ branch: (peer, req, opts) => wrap(t).branch(peer, req, opts) }),
    );
    telemetry = createTelemetry({ estimates: h.book, clock: h.clock });
    const obs = telemetry.observer;
    const wrap = (t: PeerTransport): PeerTransport => telemetry.wrapTransport(t);
    h.transport.addPeer("fast-1", { latency: 2, handler: () => "a" });
    h.transport.addPeer("fast-2", { latency: 3, handler: () => "b" });
    h.transport.addPeer("slow", { latency: 400, handler: () => "c" });
    for (const p of ["fast-1", "fast-2", "slow"]) h.warm(p, 5);
    const model = collectModel();
    const run = <T>(p: Promise<T>): Promise<T> => h.clock.runUntilSettled(p);
    await run(h.coordinator.fanOut(task, { peers: ["fast-1", "fast-2"], budgetMs: 200, model }));
    await run(h.coordinator.fanOut(task, { peers: ["fast-1", "fast-2", "slow"], budgetMs: 60, model }));
    await run(h.coordinator.fanOut(task, { peers: ["fast-1"], budgetMs: 1, model, fallback: () => "local" }));
    // a SpeculationBudgetViolation turned into degrade, past its deadline: violations and misses have series
    await run(
      h.coordinator.fanOut(task, { peers: ["fast-1"], budgetMs: -1, model, fallback: () => "local" }),
    );
    // no peer answers by the deadline: the prior, counted in no_answer
    const withPrior = predicateModel<unknown, string>({
      prior: "hold",
      decide: () => "act",
      canFlip: () => true,
    });
    await run(
      h.coordinator.fanOut(task, { peers: ["slow"], budgetMs: 60, model: withPrior, policy: "always-sync" }),
    );
    await h.clock.runUntilIdle();

    // the node's endpoint again, renamed as the Collector's exporter writes it
    const node = `http://127.0.0.1:${sdk.prometheus!.port}/metrics`;
    collector = createServer((_req, res) => {
      fetch(node)
        .then((r) => r.text())
        .then(
          (text) =>
            res.writeHead(200, { "content-type": "text/plain; version=0.0.4" }).end(rewriteExposition(text)),
          (err: unknown) => res.writeHead(502).end(String(err)),
        );
    });
    await new Promise<void>((ok) => collector!.listen(0, "127.0.0.1", ok));
    const collectorPort = (collector.address() as { port: number }).port;

    const [port] = await freePorts(1);
    dir = mkdtempSync(join(tmpdir(), "tailswarm-prom-"));
    writeFileSync(
      join(dir, "prometheus.yml"),
      [
        "global:",
        "  scrape_interval: 500ms",
        "scrape_configs:",
        "  - job_name: tailswarm",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${sdk.prometheus!.port}"]`,
        "  - job_name: collector",
        "    static_configs:",
        `      - targets: ["127.0.0.1:${collectorPort}"]`,
        "",
      ].join("\n"),
    );
    prom = spawn(
      PROMETHEUS,
      [
        `--config.file=${join(dir, "prometheus.yml")}`,
        `--storage.tsdb.path=${join(dir, "data")}`,
        `--web.listen-address=127.0.0.1:${port}`,
        "--log.level=warn",
      ],
      { stdio: "ignore" },
    );
    api = `http://127.0.0.1:${port}`;
    const end = Date.now() + 30_000;
    for (;;) {
      const ready = await fetch(`${api}/-/ready`).then(
        (r) => r.ok,
        () => false,
      );
      if (ready) break;
      if (Date.now() > end) throw new Error("prometheus did not become ready");
      await new Promise((ok) => setTimeout(ok, 200));
    }
  }, 60_000);

  afterAll(async () => {
    prom?.kill("SIGTERM");
    collector?.close();
    telemetry?.close();
    await sdk?.shutdown();
    if (dir !== "") rmSync(dir, { recursive: true, force: true });
  });

  it("finds fan-outs by mode and reason, branches by outcome and relevance, with non-zero values", async () => {
    const fanouts = await until('tailswarm_fanout_decisions_total{job="tailswarm"}');
    const modes = fanouts.map((s) => `${s.metric["tailswarm_mode"]}/${s.metric["tailswarm_reason"]}`).sort();
    expect(modes).toEqual([
      "degrade/budget-at-or-below-p50",
      "degrade/non-positive-budget",
      "speculate/budget-exceeds-p99-plus-abandon-cost",
      "synchronous/policy-always-sync",
    ]);
    const spec = fanouts.find((s) => s.metric["tailswarm_mode"] === "speculate")!;
    expect(Number(spec.value[1])).toBe(2);

    // outcomes depend on timing on a loaded machine; their labels and totals do not
    const branches = await until('tailswarm_branch_outcomes_total{job="tailswarm"}');
    for (const b of branches) {
      expect(["committed", "partial", "abandoned", "late", "failed"]).toContain(
        b.metric["tailswarm_branch_outcome"],
      );
      expect(["true", "false"]).toContain(b.metric["tailswarm_branch_pivotal"]);
      expect(Number(b.value[1])).toBeGreaterThan(0);
    }
    expect(branches.reduce((n, s) => n + Number(s.value[1]), 0)).toBe(6);
    const used = await until(
      'tailswarm_branch_outcomes_total{tailswarm_branch_outcome=~"committed|partial"}',
    );
    expect(used.length).toBeGreaterThan(0);
  });

  it("computes the commit rate and the decision-relevant commit rate in PromQL", async () => {
    const all = await until('tailswarm_branch_outcomes_total{job="tailswarm"}');
    const count = (f: (m: Record<string, string>) => boolean): number =>
      all.filter((s) => f(s.metric)).reduce((n, s) => n + Number(s.value[1]), 0);
    const committed = count((m) => m["tailswarm_branch_outcome"] === "committed");
    const usedN = count((m) => ["committed", "partial"].includes(m["tailswarm_branch_outcome"]!));
    const relevantN = count(
      (m) =>
        ["committed", "partial"].includes(m["tailswarm_branch_outcome"]!) &&
        m["tailswarm_branch_pivotal"] === "true",
    );
    const commit = await query(
      'sum(tailswarm_branch_outcomes_total{job="tailswarm",tailswarm_branch_outcome="committed"}) / sum(tailswarm_branch_outcomes_total{job="tailswarm"})',
    );
    if (committed > 0) expect(Number(commit[0]!.value[1])).toBeCloseTo(committed / 6);
    const relevant = await query(
      'sum(tailswarm_branch_outcomes_total{job="tailswarm",tailswarm_branch_outcome=~"committed|partial",tailswarm_branch_pivotal="true"})' +
        ' / sum(tailswarm_branch_outcomes_total{job="tailswarm",tailswarm_branch_outcome=~"committed|partial"})',
    );
    if (relevantN > 0) expect(Number(relevant[0]!.value[1])).toBeCloseTo(relevantN / usedN);

    // the headline: both speculative fan-outs decided on answers ("a,b"), not the model's prior ("none")
    const committedFanouts = await until('tailswarm_fanout_committed_total{job="tailswarm"}');
    expect(committedFanouts.map((x) => [x.metric["tailswarm_mode"], x.metric["tailswarm_policy"]])).toEqual([
      ["speculate", "p99-boundary"],
    ]);
    const headline = await query(
      'sum(tailswarm_fanout_committed_total{job="tailswarm",tailswarm_fanout_decision_relevant="true"})' +
        ' / sum(tailswarm_fanout_committed_total{job="tailswarm"})',
    );
    expect(Number(headline[0]!.value[1])).toBe(1);
    expect(Number(committedFanouts[0]!.value[1])).toBe(2);
  });

  it("has per-peer p99 and sample gauges from the estimator", async () => {
    const p99 = await until('tailswarm_branch_estimate_p99{job="tailswarm"}');
    expect(p99.map((s) => s.metric["tailswarm_peer"]).sort()).toEqual(["fast-1", "fast-2", "slow"]);
    expect(p99.every((s) => Number(s.value[1]) > 0)).toBe(true);
    const samples = await until('tailswarm_branch_estimate_samples{job="tailswarm",tailswarm_peer="fast-1"}');
    expect(Number(samples[0]!.value[1])).toBeGreaterThanOrEqual(20);
    const budget = await until('tailswarm_fanout_budget_count{job="tailswarm"}');
    expect(budget.length).toBeGreaterThan(0);
  });

  it("counts the new traces the default sampler started", async () => {
    const roots = await until('tailswarm_trace_roots_total{job="tailswarm",tailswarm_trace_sampled="true"}');
    expect(Number(roots[0]!.value[1])).toBeGreaterThanOrEqual(3); // one per fan-out, under 10/s
  });

  it("answers every query of the Grafana dashboard alike from the node's names and the Collector's", async () => {
    // rate() needs two scrapes of each job in its window
    for (const job of ["tailswarm", "collector"])
      await until(`rate(tailswarm_fanout_decisions_total{job="${job}"}[1m])`);
    // the Collector's names really differ where a unit adds a suffix
    expect(await until('tailswarm_branch_duration_seconds_bucket{job="collector"}')).not.toHaveLength(0);
    expect(await query('tailswarm_branch_duration_seconds_bucket{job="tailswarm"}')).toHaveLength(0);
    expect(await until('tailswarm_branch_estimate_fresh_ratio{job="collector"}')).not.toHaveLength(0);
    const dash = JSON.parse(readFileSync("docker/grafana/dashboards/tailswarm.json", "utf8")) as {
      panels: { title: string; targets: { expr: string }[] }[];
    };
    const labelSets = (r: Sample[]): string[] =>
      r
        .map((x) => {
          const { job: _job, instance: _instance, ...rest } = x.metric;
          return JSON.stringify(Object.entries(rest).sort());
        })
        .sort();
    let queries = 0;
    for (const panel of dash.panels) {
      for (const t of panel.targets) {
        const at = (job: string): string =>
          t.expr.replaceAll("$__rate_interval", "1m").replaceAll("$job", job);
        const node = await query(at("tailswarm"));
        const viaCollector = await query(at("collector"));
        const seen = { panel: panel.title, expr: at("tailswarm") };
        // every query has data from the node's fan-outs, and the same series through the Collector's names
        expect({ ...seen, series: node.length > 0 }).toEqual({ ...seen, series: true });
        expect({ ...seen, series: labelSets(viaCollector) }).toEqual({ ...seen, series: labelSets(node) });
        queries++;
      }
    }
    expect(queries).toBeGreaterThanOrEqual(20);
  });
});
