/** The abandon registry holds the ids of early Abandons by bytes, not only by count. */
import { describe, expect, it } from "vitest";
import { AbandonRegistry } from "../../src/mesh/abandon-registry.js";

describe("abandon registry", () => {
  it("holds early abandons by bytes too: 30k ids of 16 KB stay under maxTombstoneBytes", () => {
    let dropped = 0;
    const r = new AbandonRegistry({ maxTombstoneBytes: 1024 * 1024, onEvict: (n) => (dropped += n) });
    const reason = new Error("x");
    for (let i = 0; i < 30_000; i++) r.abandon(`${i}:${"i".repeat(16_000)}`, reason, 0);
    expect(r.tombstoneBytes).toBeLessThanOrEqual(1024 * 1024);
    expect(dropped).toBeGreaterThan(29_000);
    // The newest ids are still remembered: a late Branch with one is refused.
    expect(r.add(`29999:${"i".repeat(16_000)}`, new AbortController())).toBe(false);
  });
});
