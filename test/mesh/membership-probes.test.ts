/**
 * Which peers are actively probed: addresses not yet identified and addresses down at a backoff that
 * doubles per unanswered probe up to `probeBackoffMaxMs`; an identified peer that is up only while
 * `wantsProbe` asks for it (the node asks for active-set peers
 * that are idle or suspected, `PeerHealth.needsProbe`). Real servers on loopback.
 */
import { afterEach, describe, expect, it } from "vitest";
import { Membership } from "../../src/mesh/membership/membership.js";
import { healthObserver, PeerHealth } from "../../src/mesh/membership/health.js";
import type { BranchRecord } from "../../src/engine/outcome.js";
import { loadConfig } from "../../src/node/config/load-config.js";

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
import { startNodeMembership, startServer, until } from "./helpers.js";
import type { Started } from "./helpers.js";

describe("membership probes", () => {
  const cleanup: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanup.splice(0).reverse()) c();
  });
  async function server(nodeId: string): Promise<Started> {
    const s = await startServer({ nodeId, region: "r" });
    cleanup.push(() => s.server.forceClose());
    return s;
  }

  it("probes an identified peer only while wantsProbe asks; a down address until it is back", async () => {
    const a = await server("a");
    const b = await server("b");
    const wanted = new Set<string>();
    const m = new Membership({
      sources: [`static:///${a.address},${b.address}`],
      probeIntervalMs: 20,
      probeTimeoutMs: 500,
      failureThreshold: 1,
      probeBackoffMaxMs: 40,
      wantsProbe: (id) => wanted.has(id),
    });
    cleanup.push(() => m.stop());
    await m.start();
    expect(m.live()).toEqual(["a", "b"]); // the first round identifies both
    const afterFirst = m.probesSent;
    expect(afterFirst).toBe(2);

    await new Promise((r) => setTimeout(r, 200)); // ≈ 10 rounds: nobody wanted
    expect(m.probesSent).toBe(afterFirst);

    wanted.add("b");
    const before = m.probesSent;
    await until(() => m.probesSent >= before + 5);
    b.server.forceClose();
    await until(() => !m.live().includes("b")); // a wanted peer's death is seen by probes
    wanted.clear();
    const downSince = m.probesSent;
    await until(() => m.probesSent >= downSince + 3); // down: probed though no longer wanted
    expect(m.live()).toEqual(["a"]);
  });

  it("an address that does not answer is probed at a doubling backoff up to probeBackoffMaxMs, not every round", async () => {
    const gone = await server("gone");
    const address = gone.address;
    gone.server.forceClose(); // nothing listens there: every probe is refused
    let now = 0;
    const clock = { now: () => now, setTimer: () => ({ cancel() {} }) };
    const m = new Membership({
      sources: [`static:///${address}`],
      probeIntervalMs: 1_000,
      probeBackoffMaxMs: 4_000,
      clock,
    });
    cleanup.push(() => m.stop());
    await m.start(); // round at t = 0
    const at: number[] = [0];
    for (now = 1_000; now <= 30_000; now += 1_000) {
      const before = m.probesSent;
      await m.probeNow();
      if (m.probesSent > before) at.push(now);
    }
    // waits of ~1, 2, 4 s, then 4 s ±20% (rounds every second): 8 to 10 probes in 31 rounds
    expect(at.length).toBeGreaterThanOrEqual(8);
    expect(at.length).toBeLessThanOrEqual(10);
    const waits = at.slice(1).map((t, i) => t - at[i]!);
    expect(waits.slice(3).every((w) => w >= 3_000 && w <= 5_000)).toBe(true);
  });

  it("PeerHealth.needsProbe: a peer never reported, idle, or suspected needs one; one in steady use does not", () => {
    const h = new PeerHealth({ failureThreshold: 2, baseEjectionMs: 1_000 });
    expect(h.needsProbe("p", 0, 500)).toBe(true); // nothing reported yet
    h.report("p", { kind: "ok", latencyMs: 5 }, 1_000);
    expect(h.needsProbe("p", 1_400, 500)).toBe(false);
    expect(h.needsProbe("p", 1_500, 500)).toBe(true); // idle for idleMs
    h.report("p", { kind: "failed" }, 1_600);
    expect(h.needsProbe("p", 1_601, 500)).toBe(true); // suspected: its last branch failed
    h.report("p", { kind: "failed" }, 1_602); // ejected
    h.report("p", { kind: "ok", latencyMs: 5 }, 1_603);
    expect(h.needsProbe("p", 1_604, 500)).toBe(true); // still out (ejected until 2_602)
    h.report("p", { kind: "ok", latencyMs: 5 }, 2_700); // returned through probation
    expect(h.needsProbe("p", 2_701, 500)).toBe(false);
  });

  it("a node probes an idle active-set peer at the backoff, not every round, and not at all while in use", async () => {
    const p = await server("p");
    const { config } = await loadConfig({
      argv: [
        "--node-id",
        "a",
        "--peers",
        p.address,
        "--probe-interval-ms",
        "50",
        "--probe-timeout-ms",
        "50",
      ].concat(["--probe-suspect-backoff-max-ms", "400"]),
      env: {},
    });
    const health = new PeerHealth();
    const m = await startNodeMembership(config, health, cleanup);
    await until(() => m.live().includes("p"), 5_000);
    // idle (never a branch): waits of 50, 100, 200, then 400 ms (±20%) — about 6 probes in 1.5 s, not 30;
    // at least 3 even when the wait for "live" ran late and the backoff is at its cap already
    const idle0 = m.probesSent;
    await sleep(1_500);
    const idle = m.probesSent - idle0;
    expect(idle).toBeGreaterThanOrEqual(3);
    expect(idle).toBeLessThanOrEqual(12);
    // in use (an answered branch each 100 ms, within the window): no probe
    const stop = setInterval(() => health.report("p", { kind: "ok", latencyMs: 1 }, Date.now()), 100);
    cleanup.push(() => clearInterval(stop));
    health.report("p", { kind: "ok", latencyMs: 1 }, Date.now());
    await sleep(100); // a probe already in flight ends
    const used0 = m.probesSent;
    await sleep(500);
    expect(m.probesSent).toBe(used0);
  });

  it("a branch cut at its deadline is use: the peer is not idle, and its standing is unchanged", () => {
    const h = new PeerHealth({ failureThreshold: 2 });
    const observer = healthObserver(h, () => now);
    let now = 1_000;
    const cut = {
      peer: "p",
      branchId: "1",
      deadline: 0,
      latencyMs: 2_000,
      lostWorkMs: 0,
      decisionRelevant: false,
      outcome: "late",
      result: { kind: "deadline", lostWorkMs: 0 },
    } as BranchRecord;
    observer.onBranchEnd?.("f", cut);
    expect(h.needsProbe("p", 1_400, 500)).toBe(false); // cut branches only: still in use
    expect(h.needsProbe("p", 1_500, 500)).toBe(true); // idle once they stop
    h.report("p", { kind: "failed" }, 1_600);
    now = 1_700;
    observer.onBranchEnd?.("f", cut);
    expect(h.suspected("p")).toBe(true); // a cut says nothing of health: the failure still stands
    expect(h.admits("p", 1_701)).toBe(true);
    h.report("p", { kind: "failed" }, 1_800);
    expect(h.admits("p", 1_801)).toBe(false); // two failures in a row, the cut between them no reset
  });
});
