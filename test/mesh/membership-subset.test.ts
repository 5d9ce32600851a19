import { describe, expect, it } from "vitest";
import { ChannelPool } from "../../src/mesh/channel-pool.js";
import { Membership } from "../../src/mesh/membership/membership.js";

// Ports nobody listens on: every probe fails fast; only which addresses are probed matters here (a
// refused probe closes its channel, so the probed are those with a failure on record).
const addresses = Array.from({ length: 100 }, (_, i) => `127.0.0.1:${1 + i}`);

function probedBy(selfId: string, subsetSize: number): Promise<string[]> {
  const pool = new ChannelPool();
  const m = new Membership({
    sources: [`static:///${addresses.join(",")}`],
    pool,
    selfId,
    subsetSize,
    probeTimeoutMs: 50,
  });
  return m
    .start()
    .then(() =>
      m
        .peers()
        .filter((p) => p.consecutiveFailures > 0)
        .map((p) => p.address)
        .sort(),
    )
    .finally(() => {
      m.stop();
      pool.closeAll();
    });
}

describe("membership subsetting", () => {
  it("probes a deterministic subset of subsetSize addresses, different per node", async () => {
    const a1 = await probedBy("a", 16);
    const a2 = await probedBy("a", 16);
    const b = await probedBy("b", 16);
    expect(a1).toHaveLength(16);
    expect(a2).toEqual(a1);
    expect(b).toHaveLength(16);
    expect(b).not.toEqual(a1);
  }, 20_000);

  it("a pool closes channels idle past the bound", () => {
    const pool = new ChannelPool();
    pool.get("127.0.0.1:1");
    expect(pool.closeIdle(60_000)).toBe(0);
    expect(pool.closeIdle(-1)).toBe(1);
    expect(pool.addresses()).toEqual([]);
  });
});
