/**
 * The testbed against a swarm that is already running (`tailswarm testbed --attach
 * coord-90ms=host:port,...`): nothing is launched; the same load generator, policy interleaving and
 * report drive the scenario's coordinators at the given addresses, and the report gains an `attached`
 * section (docs/testbed.md, "In containers"): membership changes seen by polling the coordinators'
 * `NodeStatus`, how fan-outs resolved after each lost peer went down, and the branches peers answered.
 * The scenario must be the one the swarm was built from: peer ids, gateway groups and decision weights
 * come from it.
 */
import { mkdir } from "node:fs/promises";
import { resolve } from "node:path";
import { TailswarmError, invalid } from "../errors.js";
import { NodeClient } from "../node/client.js";
import type { CallRecord } from "./records.js";
import { LoadGenerator } from "./load-generator.js";
import { Progress } from "./progress.js";
import type { Report } from "./report.js";
import { renderHtml } from "./report-html.js";
import { formatTable } from "./report-table.js";
import { driveLoad, driveReport, writeRunFiles } from "./drive.js";
import type { DriveResult, RunFiles } from "./drive.js";
import { waitMembership } from "./run-testbed.js";
import type { Scenario } from "./scenario-types.js";
import { SwarmClient } from "./swarm-client.js";
import { round } from "./value-model.js";
import { decisionOptions, gatewayModels, planPeers } from "./topology.js";

export interface AttachOptions {
  readonly scenario: Scenario;
  /** Coordinator name (as in the scenario) → host:port. Every scenario coordinator needs one. */
  readonly coordinators: ReadonlyMap<string, string>;
  /** host:port of a scenario peer, for the direct fan-out measurement; none = no measurement. */
  readonly peerAddress?: (peerId: string) => string;
  readonly outDir: string;
  readonly signal?: AbortSignal;
  readonly progress?: Progress;
  /** Until every coordinator answers and sees every peer, ms. Default 180 s (containers start slowly). */
  readonly readyTimeoutMs?: number;
  /** How often the coordinators' views of their peers are read, ms. Default 500. */
  readonly membershipPollMs?: number;
}

export interface MembershipEvent {
  /** Seconds since the measured run started (negative: warm-up or before). */
  readonly t_s: number;
  readonly coordinator: string;
  readonly peer: string;
  /** down: failed probes; gone: no longer listed (left DNS); up: listed and up again. */
  readonly change: "down" | "gone" | "up";
}

export interface LostPeer {
  readonly peer: string;
  /** When a coordinator first marked it down or lost it (s since the measured run started). */
  readonly marked_down_t_s: number;
  readonly marked_down_by: readonly string[];
  /** Its last answered branch (s), null when it never answered in the measured run. */
  readonly last_answer_t_s: number | null;
  /** Seconds from its last answer to the first coordinator marking it down (an upper bound). */
  readonly detection_s: number | null;
  /** The fan-outs sent after its last answer, per coordinator. */
  readonly fanouts_after: Record<string, FanoutsAfter>;
}

export interface FanoutsAfter {
  readonly calls: number;
  /** The coordinator replied (any mode). */
  readonly answered: number;
  /** Replied within the caller's budget (the gRPC deadline). */
  readonly within_budget: number;
  readonly deadline_misses: number;
  /** Other errors (not a deadline). */
  readonly failed: number;
  /** Branches sent to the lost peer in those fan-outs, and how they ended. */
  readonly branches_to_lost_peer: Record<string, number>;
  /** Slowest caller round trip minus the budget, ms (≤ a few ms: every call resolved by its deadline). */
  readonly max_overrun_ms: number | null;
}

export interface AttachedSummary {
  readonly coordinators: Record<string, string>;
  readonly peers_expected: number;
  /** Peers that answered at least one branch in the measured run. */
  readonly peers_answering: number;
  readonly branches: { readonly answered: number; readonly total: number };
  readonly membership_events: readonly MembershipEvent[];
  readonly lost_peers: readonly LostPeer[];
}

export type AttachedReport = Report & { readonly attached: AttachedSummary };

export interface AttachResult {
  readonly report: AttachedReport;
  readonly table: string;
  readonly files: RunFiles;
}

const ANSWERED = new Set(["committed", "partial", "late"]);

/** `a=host:port,b=host:port` → Map; throws a usage-shaped error naming the bad part. */
export function parseAttach(spec: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of spec.split(",").map((x) => x.trim())) {
    if (part === "") continue;
    const m = /^([^=\s]+)=(\S+:\d+)$/.exec(part);
    if (m === null)
      throw invalid("--attach", part, "NAME=HOST:PORT items, comma-separated", { code: "INVALID_CONFIG" });
    out.set(m[1]!, m[2]!);
  }
  if (out.size === 0)
    throw invalid("--attach", spec, "at least one NAME=HOST:PORT", { code: "INVALID_CONFIG" });
  return out;
}

/** Polls every coordinator's NodeStatus and records changes of its view of each peer. */
class MembershipWatch {
  readonly events: { at: number; coordinator: string; peer: string; change: MembershipEvent["change"] }[] =
    [];
  readonly #clients: Map<string, NodeClient>;
  /** coordinator → peer → up */
  readonly #state = new Map<string, Map<string, boolean>>();
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;
  #busy = false;

  constructor(coordinators: ReadonlyMap<string, string>) {
    this.#clients = new Map([...coordinators].map(([n, a]) => [n, new NodeClient(a)]));
  }

  start(everyMs: number): void {
    const tick = async (): Promise<void> => {
      if (this.#stopped) return;
      if (!this.#busy) {
        this.#busy = true;
        await this.poll().finally(() => (this.#busy = false));
      }
      if (!this.#stopped) this.#timer = setTimeout(() => void tick(), everyMs);
    };
    void tick();
  }

  async poll(): Promise<void> {
    await Promise.all(
      [...this.#clients].map(async ([name, client]) => {
        const reply = await client.status(2_000).catch(() => undefined);
        if (reply === undefined || this.#stopped) return;
        const at = Date.now();
        const prev = this.#state.get(name) ?? new Map<string, boolean>();
        const now = new Map<string, boolean>();
        for (const p of reply.peers ?? []) if (p.peerId !== "") now.set(p.peerId, p.up);
        for (const [peer, up] of now) {
          const was = prev.get(peer);
          if (was === true && !up) this.events.push({ at, coordinator: name, peer, change: "down" });
          if (was === false && up) this.events.push({ at, coordinator: name, peer, change: "up" });
        }
        for (const [peer, was] of prev) {
          if (!now.has(peer) && was) this.events.push({ at, coordinator: name, peer, change: "gone" });
        }
        // A peer that is gone stays known as down, so its return reads as "up".
        for (const [peer] of prev) if (!now.has(peer)) now.set(peer, false);
        this.#state.set(name, now);
      }),
    );
  }

  stop(): void {
    this.#stopped = true;
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    for (const c of this.#clients.values()) c.close();
  }
}

export async function runAttached(o: AttachOptions): Promise<AttachResult> {
  const s = o.scenario;
  const progress = o.progress ?? new Progress();
  const outDir = resolve(o.outDir);
  await mkdir(outDir, { recursive: true });
  const missing = s.coordinators.filter((c) => !o.coordinators.has(c.name)).map((c) => c.name);
  const unknown = [...o.coordinators.keys()].filter((n) => !s.coordinators.some((c) => c.name === n));
  if (missing.length > 0 || unknown.length > 0) {
    throw invalid(
      "--attach",
      [...o.coordinators.keys()].join(","),
      `exactly the scenario's coordinators (${s.coordinators.map((c) => c.name).join(", ")})` +
        (missing.length > 0 ? `; missing: ${missing.join(", ")}` : "") +
        (unknown.length > 0 ? `; not in the scenario: ${unknown.join(", ")}` : ""),
      { code: "INVALID_CONFIG" },
    );
  }
  const peers = planPeers(s);
  const decision = decisionOptions(s, peers) as {
    options: string[];
    prior: string;
    weights: Record<string, number>;
  };
  const coordClients = new Map(
    s.coordinators.map((c) => [c.name, new SwarmClient(o.coordinators.get(c.name)!)]),
  );
  const peerClients = new Map<string, SwarmClient>();
  if (o.peerAddress !== undefined)
    for (const p of peers) peerClients.set(p.id, new SwarmClient(o.peerAddress(p.id)));
  const watch = new MembershipWatch(o.coordinators);
  const gen = new LoadGenerator(s, {
    coordinators: coordClients,
    peers: peerClients,
    gateways: gatewayModels(s),
    decision,
  });
  let interrupted = o.signal?.aborted === true;
  const onAbort = (): void => {
    interrupted = true;
    gen.stop();
  };
  o.signal?.addEventListener("abort", onAbort, { once: true });
  const startedAt = new Date();
  let driven: DriveResult | undefined;
  const t0 = Date.now();
  try {
    progress.log(
      `testbed ${s.name} (attached): ${coordClients.size} coordinators at ${[...o.coordinators.values()].join(", ")}`,
    );
    const timeoutMs = o.readyTimeoutMs ?? 180_000;
    await waitAnswering(new Map([...coordClients, ...peerClients]), t0 + timeoutMs, o.signal, progress);
    await waitMembership(
      coordClients,
      peers.length,
      decision,
      o.signal,
      Math.max(30_000, t0 + timeoutMs - Date.now()),
    );
    progress.log(
      `every coordinator sees all ${peers.length} peers after ${((Date.now() - t0) / 1000).toFixed(1)} s`,
    );
    watch.start(o.membershipPollMs ?? 500);
    driven = await driveLoad(gen, s, progress, { interrupted: () => interrupted });
    progress.done();
  } finally {
    o.signal?.removeEventListener("abort", onAbort);
    gen.stop();
    await gen.drain();
    watch.stop();
    for (const c of [...coordClients.values(), ...peerClients.values()]) c.close();
  }
  const base = driveReport({
    scenario: s,
    peers,
    decision,
    startedAt,
    interrupted,
    gen,
    driven,
    processes: null,
  });
  const measuredStart = driven?.measuredStart ?? Date.now();
  const events: MembershipEvent[] = watch.events.map((e) => ({
    t_s: round((e.at - measuredStart) / 1000, 2),
    coordinator: e.coordinator,
    peer: e.peer,
    change: e.change,
  }));
  const attached = summarize(s, Object.fromEntries(o.coordinators), peers.length, gen.calls, events);
  const report: AttachedReport = { ...base, attached };
  const table = formatTable(report) + formatAttached(attached);
  const files = await writeRunFiles(
    outDir,
    report,
    withAttachedSection(renderHtml(report), attached),
    table,
    gen,
  );
  return { report, table, files };
}

/** The `attached` section from the recorded calls and membership events (pure; exported for tests). */
export function summarize(
  s: Scenario,
  coordinators: Record<string, string>,
  peersExpected: number,
  calls: readonly CallRecord[],
  events: readonly MembershipEvent[],
): AttachedSummary {
  let answered = 0;
  let total = 0;
  const answering = new Set<string>();
  const lastAnswer = new Map<string, number>();
  for (const c of calls) {
    for (const b of c.branches) {
      total++;
      if (!ANSWERED.has(b.outcome)) continue;
      answered++;
      answering.add(b.peer);
      // The answer arrived at about send time + its latency.
      const at = c.t + b.latencyMs;
      if (at > (lastAnswer.get(b.peer) ?? -Infinity)) lastAnswer.set(b.peer, at);
    }
  }
  const lost: LostPeer[] = [];
  const downPeers = [...new Set(events.filter((e) => e.change !== "up").map((e) => e.peer))].sort();
  for (const peer of downPeers) {
    const downs = events.filter((e) => e.peer === peer && e.change !== "up");
    const first = Math.min(...downs.map((e) => e.t_s));
    const lastMs = lastAnswer.get(peer);
    const from = lastMs ?? first * 1000;
    const after: Record<string, FanoutsAfter> = {};
    for (const c of s.coordinators) {
      const rows = calls.filter((r) => r.coordinator === c.name && r.t >= from);
      const outcomes: Record<string, number> = {};
      for (const r of rows)
        for (const b of r.branches) if (b.peer === peer) outcomes[b.outcome] = (outcomes[b.outcome] ?? 0) + 1;
      const overrun = rows.map((r) => r.rttMs - r.budgetMs);
      after[c.name] = {
        calls: rows.length,
        answered: rows.filter((r) => r.ok).length,
        within_budget: rows.filter((r) => r.ok && !r.deadlineMissed).length,
        deadline_misses: rows.filter((r) => r.deadlineMissed).length,
        failed: rows.filter((r) => !r.ok && !r.deadlineMissed).length,
        branches_to_lost_peer: outcomes,
        max_overrun_ms: overrun.length === 0 ? null : round(Math.max(...overrun), 2),
      };
    }
    lost.push({
      peer,
      marked_down_t_s: first,
      marked_down_by: [...new Set(downs.map((e) => e.coordinator))].sort(),
      last_answer_t_s: lastMs === undefined ? null : round(lastMs / 1000, 2),
      detection_s: lastMs === undefined ? null : round(first - lastMs / 1000, 2),
      fanouts_after: after,
    });
  }
  return {
    coordinators,
    peers_expected: peersExpected,
    peers_answering: answering.size,
    branches: { answered, total },
    membership_events: events,
    lost_peers: lost,
  };
}

function formatAttached(a: AttachedSummary): string {
  const lines = [
    "",
    `attached swarm: ${Object.entries(a.coordinators)
      .map(([n, addr]) => `${n}=${addr}`)
      .join(", ")}`,
    `  ${a.peers_answering}/${a.peers_expected} peers answered branches; ${a.branches.answered}/${a.branches.total} branches answered`,
  ];
  if (a.lost_peers.length === 0) lines.push("  no peer was marked down");
  for (const l of a.lost_peers) {
    lines.push(
      `  peer ${l.peer} marked down at ${l.marked_down_t_s} s by ${l.marked_down_by.join(", ")}` +
        (l.last_answer_t_s === null
          ? ""
          : ` (last answer ${l.last_answer_t_s} s, detected within ${l.detection_s} s)`),
    );
    for (const [c, f] of Object.entries(l.fanouts_after)) {
      lines.push(
        `    ${c}: ${f.calls} fan-outs after its last answer: ${f.answered} answered, ${f.within_budget} within budget, ` +
          `${f.deadline_misses} deadline misses, ${f.failed} failed; its branches: ${
            Object.entries(f.branches_to_lost_peer)
              .map(([k, v]) => `${k} ${v}`)
              .join(", ") || "none"
          }`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

function withAttachedSection(html: string, a: AttachedSummary): string {
  const esc = (x: string): string => x.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
  const section = `<section id="attached"><h2>Attached swarm</h2><pre>${esc(formatAttached(a))}</pre></section>\n`;
  const i = html.lastIndexOf("</body>");
  return i < 0 ? html + section : html.slice(0, i) + section + html.slice(i);
}

async function waitAnswering(
  clients: ReadonlyMap<string, SwarmClient>,
  until: number,
  signal: AbortSignal | undefined,
  progress: Progress,
): Promise<void> {
  const ready = new Set<string>();
  const t0 = Date.now();
  while (ready.size < clients.size) {
    if (signal?.aborted)
      throw new TailswarmError("ABORTED", "testbed interrupted while waiting for the swarm");
    if (Date.now() > until) {
      const missing = [...clients.keys()].filter((id) => !ready.has(id));
      throw new TailswarmError(
        "DEADLINE_EXCEEDED",
        `attach: ${missing.length} node(s) not answering (${missing
          .slice(0, 5)
          .map((id) => `${id} at ${clients.get(id)!.address}`)
          .join(", ")})`,
      );
    }
    await Promise.all(
      [...clients].map(async ([id, c]) => {
        if (!ready.has(id) && (await c.probe(1_000)).ok) ready.add(id);
      }),
    );
    progress.update(
      "attach",
      (Date.now() - t0) / 1000,
      (until - t0) / 1000,
      `${ready.size}/${clients.size} nodes answering`,
    );
    if (ready.size < clients.size) await new Promise((r) => setTimeout(r, 500));
  }
  progress.done();
}
