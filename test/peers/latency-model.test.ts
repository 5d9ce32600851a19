import { describe, expect, it } from "vitest";
import { createLatencyModel } from "../../src/peers/latency-model.js";
import { createRng, mixSeed } from "../../src/peers/rng.js";
import { hash32 } from "../../src/util/hash.js";

const gateway = { group: "nat-eu", episodesPerSecond: 0.5, durationMs: { min: 200, max: 600 } };
const t0 = 1_800_000_000_000;

function quantile(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))]!;
}

describe("latency model", () => {
  it("is deterministic given the seed", () => {
    const a = createLatencyModel({ seed: 7, body: { medianMs: 10, sigma: 0.5 }, gateway });
    const b = createLatencyModel({ seed: 7, body: { medianMs: 10, sigma: 0.5 }, gateway });
    const ra = createRng(1);
    const rb = createRng(1);
    for (let i = 0; i < 200; i++) {
      expect(a.sample(t0 + i * 37, ra)).toEqual(b.sample(t0 + i * 37, rb));
    }
  });

  it("has a lognormal body with the configured median and a Pareto tail above its scale", () => {
    const m = createLatencyModel({
      seed: 1,
      body: { medianMs: 20, sigma: 0.4 },
      tail: { probability: 0.05, scaleMs: 200, shape: 2 },
    });
    const rng = createRng(mixSeed(3, hash32("peer")));
    const samples = Array.from({ length: 20_000 }, () => m.sample(t0, rng));
    const bodies = samples.map((s) => s.bodyMs);
    expect(quantile(bodies, 0.5)).toBeGreaterThan(19);
    expect(quantile(bodies, 0.5)).toBeLessThan(21);
    const tails = samples.filter((s) => s.tailMs > 0);
    expect(tails.length / samples.length).toBeGreaterThan(0.04);
    expect(tails.length / samples.length).toBeLessThan(0.06);
    expect(Math.min(...tails.map((s) => s.tailMs))).toBeGreaterThanOrEqual(200);
    // The tail raises p99 far above the body's p99 (20 * e^(2.33*0.4) ≈ 51 ms).
    expect(
      quantile(
        samples.map((s) => s.serviceMs),
        0.99,
      ),
    ).toBeGreaterThan(200);
    expect(samples.every((s) => s.queueMs === 0)).toBe(true);
  });

  it("queues every peer of one gateway group together, and other groups independently", () => {
    const peerA = createLatencyModel({ seed: 5, body: { medianMs: 1, sigma: 0 }, gateway });
    const peerB = createLatencyModel({ seed: 5, body: { medianMs: 1, sigma: 0 }, gateway });
    const other = createLatencyModel({
      seed: 5,
      body: { medianMs: 1, sigma: 0 },
      gateway: { ...gateway, group: "nat-us" },
    });
    let inEpisode = 0;
    let differs = 0;
    for (let t = t0; t < t0 + 120_000; t += 50) {
      const q = peerA.gatewayQueueMs(t);
      expect(peerB.gatewayQueueMs(t)).toBe(q);
      if (q > 0) inEpisode++;
      if (q > 0 !== other.gatewayQueueMs(t) > 0) differs++;
    }
    // 0.5 episodes/s of 200–600 ms cover roughly 20% of the time (overlaps make it a little less).
    const fraction = inEpisode / 2400;
    expect(fraction).toBeGreaterThan(0.1);
    expect(fraction).toBeLessThan(0.3);
    expect(differs).toBeGreaterThan(0);
  });

  it("drains the queue at the end of the covering episodes", () => {
    const m = createLatencyModel({ seed: 11, body: { medianMs: 1, sigma: 0 }, gateway });
    const episodes = m.episodesBetween(t0, t0 + 60_000);
    expect(episodes.length).toBeGreaterThan(10);
    for (const e of episodes.slice(0, 10)) {
      expect(e.end - e.start).toBeGreaterThanOrEqual(200);
      expect(e.end - e.start).toBeLessThanOrEqual(600);
      const mid = (e.start + e.end) / 2;
      const wait = m.gatewayQueueMs(mid);
      expect(wait).toBeGreaterThanOrEqual(e.end - mid - 1e-9);
      expect(m.sample(mid, createRng(1)).queueMs).toBe(wait);
    }
  });
});
