/**
 * Writes what is generated from the config schemas: schema/node.schema.json and
 * schema/scenario.schema.json (JSON Schema, for editors and for checking a Kubernetes ConfigMap's
 * node.yaml) and the key table of docs/configuration.md. `npm run generate:config`; a test fails when
 * a committed file is not what this writes.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { generatedConfigFiles } from "../src/cli/commands/config.js";

const root = fileURLToPath(new URL("..", import.meta.url));
for (const { path, text } of generatedConfigFiles((p) => readFileSync(`${root}${p}`, "utf8"))) {
  writeFileSync(`${root}${path}`, text);
  process.stdout.write(`wrote ${path}\n`);
}
