/**
 * Rejoin after a silent partition: packets to the peer are dropped without a reset, so the open
 * connection only times out; once the path heals, the peer is live again within about two probe
 * intervals, not when the stalled connection's backed-off retransmissions happen to wake it. And the
 * node's health (node-membership.ts): a probe that times out behind the partition is no failure, as a
 * branch cut at its deadline is none; a refused one (nothing listens any more) counts toward ejection.
 *
 * The partition is a loopback TCP relay that forwards nothing while partitioned, and keeps every
 * connection opened before or during the partition stalled after healing (as a connection whose
 * retransmissions have backed off for seconds stays); only new connections get through.
 */
import { createConnection, createServer } from "node:net";
import type { Server, Socket } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { Membership } from "../../src/mesh/membership/membership.js";
import { PeerHealth } from "../../src/mesh/membership/health.js";
import { loadConfig } from "../../src/node/config/load-config.js";
import { startNodeMembership, startServer, until } from "./helpers.js";

interface Relay {
  readonly address: string;
  partition(): void;
  heal(): void;
  close(): void;
}

async function relay(target: { host: string; port: number }): Promise<Relay> {
  let partitioned = false;
  const stalled = new Set<Socket>();
  const all = new Set<Socket>();
  const server: Server = createServer((client) => {
    all.add(client);
    client.on("close", () => all.delete(client));
    client.on("error", () => client.destroy());
    if (partitioned) {
      stalled.add(client); // accepted, but nothing crosses, now or after healing
      client.pause();
      return;
    }
    const upstream = createConnection(target);
    all.add(upstream);
    upstream.on("error", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
    client.on("close", () => upstream.destroy());
    const forward = (from: Socket, to: Socket) =>
      from.on("data", (d: Buffer) => {
        if (!partitioned && !stalled.has(client)) to.write(d);
      });
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as { port: number }).port;
  return {
    address: `127.0.0.1:${port}`,
    partition() {
      partitioned = true;
      for (const s of all) stalled.add(s);
    },
    heal() {
      partitioned = false;
    },
    close() {
      for (const s of all) s.destroy();
      server.close();
    },
  };
}

describe("membership after a silent partition", () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0).reverse()) c();
  });

  it("a peer behind a healed partition is live again within 2 s", async () => {
    const peer = await startServer({ nodeId: "p", region: "r" });
    cleanup.push(() => peer.server.forceClose());
    const path = await relay({ host: "127.0.0.1", port: peer.port });
    cleanup.push(() => path.close());
    const m = new Membership({
      sources: [path.address],
      probeIntervalMs: 200,
      probeTimeoutMs: 300,
      failureThreshold: 2,
      // the down peer's probes back off at most to this, so one lands soon after the heal
      probeBackoffMaxMs: 400,
    });
    cleanup.push(() => m.stop());
    await m.start();
    await until(() => m.live().includes("p"), 10_000);

    path.partition();
    await until(() => !m.live().includes("p"), 10_000);
    await new Promise((r) => setTimeout(r, 1_000)); // the partition lasts a while

    path.heal();
    const healedAt = Date.now();
    await until(() => m.live().includes("p"), 5_000);
    expect(Date.now() - healedAt).toBeLessThanOrEqual(2_000);
  });

  it("health: probes timed out behind the partition eject nothing; refused ones (the relay gone) eject the peer", async () => {
    const peer = await startServer({ nodeId: "p", region: "r" });
    cleanup.push(() => peer.server.forceClose());
    const path = await relay({ host: "127.0.0.1", port: peer.port });
    cleanup.push(() => path.close());
    // membership keeps the peer up (probe failure threshold 100), so the node keeps asking health whether to probe it
    const { config } = await loadConfig({
      argv: ["--node-id", "a", "--peers", path.address, "--probe-interval-ms", "100"].concat([
        "--probe-timeout-ms",
        "100",
        "--probe-failure-threshold",
        "100",
        "--probe-suspect-backoff-max-ms",
        "400",
      ]),
      env: {},
    });
    const health = new PeerHealth({ failureThreshold: 2, maxEjectedPercent: 100 });
    // every peer in the active set, never in use: health is asked each round whether to probe it
    const m = await startNodeMembership(config, health, cleanup);
    await until(() => m.live().includes("p"), 10_000);

    path.partition();
    const before = m.probesSent;
    await until(() => m.probesSent >= before + 6, 10_000); // six timed out at least (the first may have answered)
    expect(health.ejected(Date.now())).toEqual([]);
    expect(m.peers()[0]?.consecutiveFailures).toBeGreaterThanOrEqual(5);

    path.close();
    await until(() => health.ejected(Date.now()).includes("p"), 10_000);
  });
});
