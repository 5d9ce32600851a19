/**
 * The key table of docs/configuration.md, generated from the schema (`npm run generate:config` writes
 * it between the doc's `<!-- keys -->` markers; a test fails when the doc is not the generated table).
 */
import type { ConfigLeaf } from "./leaves.js";
import { configLeaves, envName, flagName } from "./schema.js";

export const TABLE_START =
  "<!-- keys: generated from src/node/config/schema.ts by `npm run generate:config` -->";
export const TABLE_END = "<!-- /keys -->";

const cell = (text: string): string => text.replace(/\|/g, "\\|");

function shownDefault(leaf: ConfigLeaf): string {
  if (leaf.info.shownDefault !== undefined) return `\`${leaf.info.shownDefault}\``;
  if (leaf.default === undefined) return "(none)";
  return `\`${JSON.stringify(leaf.default)}\``;
}

/** One row per key: key, variable, flag, what it accepts, default, meaning. */
export function keyTable(leaves: readonly ConfigLeaf[] = configLeaves): string {
  const rows = leaves.map((leaf) => {
    const env = `\`${envName(leaf.path)}\``;
    const flag = `\`--${flagName(leaf.path)}\``;
    const fileOnly = leaf.info.fileOnly !== undefined;
    return [
      `\`${leaf.path}\``,
      fileOnly ? `— (${env} is refused)` : env,
      fileOnly ? `— (${flag} is refused)` : flag,
      cell(leaf.info.expected),
      shownDefault(leaf),
      cell(leaf.doc),
    ];
  });
  const lines = [
    "| key | variable | flag | value | default | meaning |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
  return lines.join("\n");
}

/** `doc` with its key table replaced by the generated one (the markers must be there). */
export function withKeyTable(doc: string): string {
  const start = doc.indexOf(TABLE_START);
  const end = doc.indexOf(TABLE_END);
  if (start < 0 || end < start)
    throw new Error(`docs/configuration.md: the markers ${TABLE_START} … ${TABLE_END} are missing`);
  return `${doc.slice(0, start + TABLE_START.length)}\n${keyTable()}\n${doc.slice(end)}`;
}
