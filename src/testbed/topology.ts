/**
 * From a scenario to the processes of the swarm: one peer node per scenario peer (the `vote` task
 * served through the `synthetic` latency model), one coordinator node per scenario coordinator (no
 * task of its own; its static peers are all the peer nodes). Also the decision options every
 * Coordinate call carries (the weighted vote) and the gateway models the load generator uses to know
 * when an event is in progress.
 */
import type { LatencyModel, LatencyModelOptions } from "../peers/latency-model.js";
import { createLatencyModel } from "../peers/latency-model.js";
import { hash32 } from "../util/hash.js";
import { createRng, mixSeed } from "../peers/rng.js";
import type { Scenario } from "./scenario-types.js";

export interface PeerPlan {
  readonly id: string;
  readonly region: string;
  /** Gateway group the peer sits behind, if any. */
  readonly gateway?: string;
  /** Sees events first: answers the request's truth (the others answer the prior). */
  readonly informed: boolean;
  readonly latency: LatencyModelOptions;
  readonly weight: number;
}

export interface NodePlan {
  readonly id: string;
  readonly role: "peer" | "coordinator";
  readonly port: number;
  /** The node config file's content (JSON). */
  readonly config: Record<string, unknown>;
}

/** The peers of a scenario, in a stable order (region by region; gateway peers first in theirs). */
export function planPeers(s: Scenario): PeerPlan[] {
  const nonGateway = s.regions.reduce((n, r) => n + r.peers, 0) - s.gateways.reduce((n, g) => n + g.peers, 0);
  const gatewayPeers = s.gateways.reduce((n, g) => n + g.peers, 0);
  const weight =
    s.workload.gatewayWeight === "auto"
      ? gatewayPeers === 0
        ? 1
        : Math.floor(nonGateway / gatewayPeers) + 1
      : s.workload.gatewayWeight;
  const out: PeerPlan[] = [];
  for (const r of s.regions) {
    const gws = s.gateways.filter((g) => g.region === r.name);
    const behind: string[] = gws.flatMap((g) => Array.from({ length: g.peers }, () => g.group));
    for (let i = 0; i < r.peers; i++) {
      const group = behind[i];
      const id = group === undefined ? `${r.name}-${pad(i + 1)}` : `${r.name}-${group}-${pad(i + 1)}`;
      const gw = gws.find((g) => g.group === group);
      const z = createRng(mixSeed(s.seed, hash32(id))).normal();
      const latency: LatencyModelOptions = {
        seed: s.seed,
        body: { medianMs: r.body.medianMs * Math.exp(r.medianSpread * z), sigma: r.body.sigma },
        ...(r.tail && { tail: r.tail }),
        ...(gw && {
          gateway: { group: gw.group, episodesPerSecond: gw.episodesPerSecond, durationMs: gw.durationMs },
        }),
      };
      out.push({
        id,
        region: r.name,
        ...(gw && { gateway: gw.group }),
        informed: gw !== undefined,
        latency,
        weight: gw !== undefined ? weight : 1,
      });
    }
  }
  return out;
}

/** One latency model per gateway group, to tell whether an event (an episode) is in progress. */
export function gatewayModels(s: Scenario): Map<string, LatencyModel> {
  const out = new Map<string, LatencyModel>();
  for (const g of s.gateways) {
    out.set(
      g.group,
      createLatencyModel({
        seed: s.seed,
        body: { medianMs: 1, sigma: 0 },
        gateway: { group: g.group, episodesPerSecond: g.episodesPerSecond, durationMs: g.durationMs },
      }),
    );
  }
  return out;
}

/** The decision options of every Coordinate call: the weighted vote over the scenario's options. */
export function decisionOptions(s: Scenario, peers: readonly PeerPlan[]): Record<string, unknown> {
  const weights: Record<string, number> = {};
  for (const p of peers) if (p.weight !== 1) weights[p.id] = p.weight;
  return { options: [...s.workload.options], prior: s.workload.prior, weights };
}

export function peerNodeConfig(s: Scenario, p: PeerPlan, port: number): Record<string, unknown> {
  const vote = p.informed ? { informed: true } : { stance: s.workload.prior };
  return {
    ...s.node,
    nodeId: p.id,
    region: p.region,
    listen: `127.0.0.1:${port}`,
    peers: [],
    handlers: [
      {
        kind: "vote",
        use: "synthetic",
        // replayShift: the load generator staggers a request's policy copies (load-generator.ts).
        options: { ...p.latency, replayShift: true, wrap: { use: "vote", options: vote } },
      },
    ],
  };
}

export function coordinatorNodeConfig(
  s: Scenario,
  name: string,
  port: number,
  peerPorts: readonly number[],
): Record<string, unknown> {
  return {
    ...s.node,
    nodeId: name,
    region: s.regions[0]?.name ?? "default",
    listen: `127.0.0.1:${port}`,
    peers: peerPorts.map((pp) => `127.0.0.1:${pp}`),
    handlers: [{ kind: "echo", use: "echo" }],
  };
}

function pad(n: number): string {
  return String(n).padStart(2, "0");
}
