import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generatedConfigFiles } from "../../src/cli/commands/config.js";
import { configLeaves, envName, flagName } from "../../src/node/config/schema.js";

const root = join(__dirname, "..", "..");
const read = (path: string): string => readFileSync(join(root, path), "utf8");

describe("files generated from the config schemas", () => {
  for (const { path, text } of generatedConfigFiles(read)) {
    it(`${path} is what the schema generates (else run npm run generate:config)`, () => {
      expect(read(path)).toBe(text);
    });
  }

  it("the node JSON Schema has every key, its default and its range", () => {
    const schema = JSON.parse(read("schema/node.schema.json")) as {
      properties: Record<
        string,
        { default?: unknown; minimum?: number; properties?: Record<string, unknown> }
      >;
      additionalProperties: boolean;
    };
    expect(schema.additionalProperties).toBe(false);
    for (const leaf of configLeaves) {
      const [top, sub] = leaf.path.split(".") as [string, string | undefined];
      const node = sub === undefined ? schema.properties[top] : schema.properties[top]?.properties?.[sub];
      expect(node, leaf.path).toBeDefined();
    }
    expect(schema.properties.concurrency).toMatchObject({ default: 64, minimum: 1, maximum: 100_000 });
    expect(schema.properties.nodeId?.default).toBeUndefined(); // computed at load
  });

  it("docs/configuration.md names every key once, with its variable and flag", () => {
    const doc = read("docs/configuration.md");
    for (const leaf of configLeaves) {
      expect(doc.split(`| \`${leaf.path}\` |`).length - 1, leaf.path).toBe(1);
      expect(doc).toContain(envName(leaf.path));
      expect(doc).toContain(`--${flagName(leaf.path)}`);
    }
  });
});
