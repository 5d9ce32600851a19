#!/usr/bin/env node
// The Grafana dashboard's panels, evaluated once against a Prometheus (its HTTP API), so that a run
// without Grafana (no image registry) still shows what the dashboard would: docker/testbed.sh
// --observability runs it before tearing the swarm down and writes OUT/dashboard.json.
//
//   node docker/dashboard-snapshot.mjs http://127.0.0.1:9090 docker/grafana/dashboards/tailswarm.json OUT.json
//
// Every target of every panel runs as an instant query with the dashboard's variables set the way
// Grafana's defaults set them: $job = All (.*), $__rate_interval = RATE (default 30s; four scrape
// intervals of 5 s plus slack). Output: { at, prometheus, targets: { job: [up, down] }, panels:
// [{ title, targets: [{ expr, legend, series: [{ labels, value }] }] }] }. One line on stderr says how
// many panels have data. Exit 0 unless Prometheus cannot be asked at all.
import { readFile, writeFile } from "node:fs/promises";
import process from "node:process";
import { URLSearchParams } from "node:url";

const [url, dashboardFile, outFile] = process.argv.slice(2);
if (url === undefined || dashboardFile === undefined || outFile === undefined) {
  process.stderr.write("usage: dashboard-snapshot.mjs PROMETHEUS_URL DASHBOARD_JSON OUT_JSON\n");
  process.exit(2);
}
const rate = process.env.RATE ?? "30s";

async function api(path, params) {
  const res = await globalThis.fetch(`${url}/api/v1/${path}?${new URLSearchParams(params)}`, {
    signal: globalThis.AbortSignal.timeout(10_000),
  });
  const body = await res.json();
  if (body.status !== "success") throw new Error(`${path}: ${body.error ?? res.status}`);
  return body.data;
}

const dashboard = JSON.parse(await readFile(dashboardFile, "utf8"));
const at = new Date().toISOString();
const targets = {};
for (const t of (await api("targets", { state: "active" })).activeTargets) {
  const job = t.labels.job;
  targets[job] ??= [0, 0];
  targets[job][t.health === "up" ? 0 : 1] += 1;
}
const panels = [];
for (const panel of dashboard.panels ?? []) {
  const out = { title: panel.title, targets: [] };
  for (const target of panel.targets ?? []) {
    const expr = target.expr.replaceAll("$__rate_interval", rate).replaceAll("$job", ".*");
    let series;
    try {
      const data = await api("query", { query: expr });
      series = data.result.map((r) => ({ labels: r.metric, value: Number(r.value[1]) }));
    } catch (err) {
      series = [];
      out.error = err.message;
    }
    out.targets.push({ expr, legend: target.legendFormat ?? "", series });
  }
  panels.push(out);
}
await writeFile(outFile, `${JSON.stringify({ at, prometheus: url, rate, targets, panels }, null, 2)}\n`);
const withData = panels.filter((p) => p.targets.some((t) => t.series.some((s) => Number.isFinite(s.value))));
const empty = panels.filter((p) => !withData.includes(p)).map((p) => p.title);
const up = Object.entries(targets)
  .map(([job, [u, d]]) => `${job} ${u}/${u + d} up`)
  .join(", ");
process.stderr.write(
  `dashboard: ${withData.length}/${panels.length} panels with data${empty.length > 0 ? ` (none: ${empty.join("; ")})` : ""}; targets: ${up}\n`,
);
