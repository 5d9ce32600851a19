/** The one table of reasons is the one the README shows. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { formatReasonTable } from "../../src/policy/describe.js";
import { REASONS } from "../../src/policy/reasons.js";

const readme = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

describe("REASONS", () => {
  it("is the README's rule table, as `tailswarm explain --reasons` prints it", () => {
    const section = /## The rule\n([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
    const table = section
      .split("\n")
      .filter((l) => l.startsWith("|"))
      .join("\n");
    expect(`${table}\n`).toBe(formatReasonTable());
  });

  it("names every reason once, each with its mode", () => {
    const table = formatReasonTable();
    for (const [reason, spec] of Object.entries(REASONS)) {
      expect(table.split(`\`${reason}\``)).toHaveLength(2);
      expect(table).toContain(`**${spec.mode}** | \`${reason}\``);
    }
  });
});
