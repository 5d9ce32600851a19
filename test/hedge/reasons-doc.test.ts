import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { HEDGE_REASONS } from "../../src/hedge/reasons.js";

describe("docs/hedging.md", () => {
  it("tables every hedging reason with its action, as src/hedge/reasons.ts says", () => {
    const doc = readFileSync(new URL("../../docs/hedging.md", import.meta.url), "utf8");
    for (const [reason, spec] of Object.entries(HEDGE_REASONS)) {
      const row = doc.split("\n").find((l) => l.startsWith(`| \`${reason}\``));
      expect(row, reason).toBeDefined();
      expect(row!.split("|")[2]!.trim()).toBe(spec.action);
    }
  });
});
