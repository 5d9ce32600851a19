/** Membership on real servers: up from static and DNS sources, down when killed, up + restarted. */
import { afterEach, describe, expect, it } from "vitest";
import { Membership } from "../../src/mesh/membership/membership.js";
import type { PeerInfo } from "../../src/mesh/membership/membership.js";
import { createSource, parseTarget } from "../../src/mesh/membership/source.js";
import { TailswarmError } from "../../src/errors.js";
import { startServer, until } from "./helpers.js";
import type { Started } from "./helpers.js";

describe("membership", () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0).reverse()) c();
  });
  async function server(nodeId: string, address?: string): Promise<Started> {
    const s = await startServer({ nodeId, region: `r-${nodeId}` }, address);
    cleanup.push(() => s.server.forceClose());
    return s;
  }

  it("static seeds: learns ids and regions; a killed peer goes down; a restarted one comes back up and restarted", async () => {
    const a = await server("a");
    let b = await server("b");
    const self = await server("me");
    const m = new Membership({
      sources: [`static:///${a.address},${b.address}`, self.address],
      selfId: "me",
      probeIntervalMs: 50,
      probeTimeoutMs: 500,
      failureThreshold: 2,
    });
    cleanup.push(() => m.stop());
    const events: string[] = [];
    const restarted: PeerInfo[] = [];
    for (const ev of ["up", "down", "restarted"] as const) m.on(ev, (p) => events.push(`${ev}:${p.id}`));
    m.on("restarted", (p) => restarted.push(p));

    await m.start();
    expect(m.live().sort()).toEqual(["a", "b"]);
    expect(m.addressOf("b")).toBe(b.address);
    expect(m.peers().find((p) => p.id === "a")?.region).toBe("r-a");

    const firstStart = b.server.startedAt;
    b.server.forceClose();
    await until(() => !m.live().includes("b"));
    expect(events).toContain("down:b");
    expect(m.live()).toEqual(["a"]);

    await new Promise((r) => setTimeout(r, 5)); // a different started_at
    b = await server("b", b.address);
    expect(b.server.startedAt).not.toBe(firstStart);
    await until(() => m.live().includes("b"), 10_000);
    expect(events.filter((e) => e.endsWith(":b"))).toEqual(["up:b", "down:b", "restarted:b", "up:b"]);
    expect(restarted[0]?.startedAt).toBe(b.server.startedAt);
  });

  it("a peer named at two addresses is one peer: live() lists its id once, addressOf picks an answering address", async () => {
    const a = await server("twice");
    const m = new Membership({
      sources: [`127.0.0.1:${a.port}`, `localhost:${a.port}`],
      probeIntervalMs: 50,
      probeTimeoutMs: 2_000,
    });
    cleanup.push(() => m.stop());
    const ups: string[] = [];
    m.on("up", (p) => ups.push(p.id));
    await m.start();
    await until(() => m.peers().every((p) => p.up), 10_000);
    expect(m.peers().map((p) => p.id)).toEqual(["twice", "twice"]);
    expect(m.live()).toEqual(["twice"]);
    expect(ups).toEqual(["twice"]);
    expect([`127.0.0.1:${a.port}`, `localhost:${a.port}`]).toContain(m.addressOf("twice"));
  });

  it("a restart is a property of the node id: a peer back at another address is restarted", async () => {
    // A free port for the peer's second life (a pod that comes back with a new IP).
    const spare = await server("spare");
    const spareAddress = spare.address;
    spare.server.forceClose();
    const first = await server("moving");
    const m = new Membership({
      sources: [first.address, spareAddress],
      probeIntervalMs: 50,
      probeTimeoutMs: 500,
      failureThreshold: 2,
    });
    cleanup.push(() => m.stop());
    const events: string[] = [];
    for (const ev of ["up", "down", "restarted"] as const) m.on(ev, (p) => events.push(`${ev}:${p.address}`));
    await m.start();
    expect(m.live()).toEqual(["moving"]);

    first.server.forceClose();
    await until(() => m.live().length === 0);
    await new Promise((r) => setTimeout(r, 5)); // a different started_at
    const second = await server("moving", spareAddress);
    await until(() => m.live().includes("moving"), 10_000);
    expect(m.addressOf("moving")).toBe(second.address);
    expect(events).toEqual([
      `up:${first.address}`,
      `down:${first.address}`,
      `restarted:${spareAddress}`,
      `up:${spareAddress}`,
    ]);
    expect(m.peers().find((p) => p.address === spareAddress)?.restarts).toBe(1);
  });

  it("dns:///name:port: each A record of the name is a peer", async () => {
    const a = await server("dns-a");
    const m = new Membership({
      sources: [`dns:///localhost:${a.port}`],
      probeIntervalMs: 50,
      refreshMs: 100,
    });
    cleanup.push(() => m.stop());
    await m.start();
    expect(m.live()).toEqual(["dns-a"]);
    expect(m.addressOf("dns-a")).toBe(a.address);
  });

  it("parses targets and rejects an unknown scheme or a bad port naming the value", () => {
    expect(parseTarget("dns:///svc.ns:7400")).toMatchObject({ scheme: "dns", path: "svc.ns:7400" });
    expect(parseTarget("10.0.0.1:7400")).toMatchObject({ scheme: "static", path: "10.0.0.1:7400" });
    expect(() => createSource("k9s:///x:1", { refreshMs: 1 })).toThrow(
      /peers: got "k9s:\/\/\/x:1", expected a target with a scheme of dns, static/,
    );
    try {
      createSource("static:///host:99999", { refreshMs: 1 });
      expect.unreachable();
    } catch (e) {
      expect(TailswarmError.is(e, "INVALID_CONFIG")).toBe(true);
      expect((e as Error).message).toMatch(
        /peers: got "static:\/\/\/host:99999", expected host:port with a port 1-65535 \("host:99999" is not\)/,
      );
    }
  });

  it("probe rounds are jittered ±20% around probeIntervalMs, so nodes do not probe in lockstep", async () => {
    const a = await server("j");
    const delays: number[] = [];
    const fire: (() => void)[] = [];
    const clock = {
      now: () => Date.now(),
      setTimer(fn: () => void, delayMs: number) {
        delays.push(delayMs);
        fire.push(fn);
        return { cancel() {} };
      },
    };
    const m = new Membership({ sources: [a.address], probeIntervalMs: 1_000, probeTimeoutMs: 2_000, clock });
    cleanup.push(() => m.stop());
    await m.start();
    for (let i = 0; i < 30; i++) {
      const n = delays.length;
      fire.shift()!();
      await until(() => delays.length > n);
    }
    expect(delays.every((d) => d >= 800 && d <= 1_200)).toBe(true);
    expect(new Set(delays.map((d) => Math.round(d))).size).toBeGreaterThan(20);
  });
});
