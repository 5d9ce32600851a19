/**
 * `tailswarm config schema [node|scenario]`: print the JSON Schema of the node config (default) or of
 * a testbed scenario — for editors (`# yaml-language-server: $schema=…`) and for checking a Kubernetes
 * ConfigMap's node.yaml before it ships. The same schemas are committed under schema/ (written by
 * `npm run generate:config`, with docs/configuration.md's key table; a test keeps them current).
 */
import { withKeyTable } from "../../node/config/docs-table.js";
import { jsonSchemaOf } from "../../node/config/leaves.js";
import { nodeConfigSchema } from "../../node/config/schema.js";
import { ExitCode } from "../../node/exit-codes.js";
import { suggestion, UsageError } from "../args.js";
import { guard } from "../verb-errors.js";
import { scenarioSchema } from "../../testbed/scenario-schema.js";

const SCHEMAS = {
  node: () =>
    jsonSchemaOf(nodeConfigSchema, {
      title: "tailswarm node config (node.yaml)",
    }),
  scenario: () =>
    jsonSchemaOf(scenarioSchema, {
      title: "tailswarm testbed scenario",
    }),
} as const;

const USAGE =
  "usage: tailswarm config schema [node|scenario]\n\n" +
  "Print the JSON Schema of the node config (default) or of a testbed scenario.\n\n" +
  "options:\n  -h, --help  show this help\n  --version   print the tailswarm version\n";

function schemaText(which: keyof typeof SCHEMAS): string {
  return `${JSON.stringify(SCHEMAS[which](), null, 2)}\n`;
}

/** Every generated file, by path from the repository root, as `npm run generate:config` writes it. */
export function generatedConfigFiles(read: (path: string) => string): { path: string; text: string }[] {
  return [
    { path: "schema/node.schema.json", text: schemaText("node") },
    { path: "schema/scenario.schema.json", text: schemaText("scenario") },
    { path: "docs/configuration.md", text: withKeyTable(read("docs/configuration.md")) },
  ];
}

export function run(argv: string[]): Promise<number> {
  return guard("config", async () => {
    const [sub, which = "node", ...rest] = argv;
    if (sub === "--help" || sub === "-h") {
      process.stdout.write(USAGE);
      return ExitCode.OK;
    }
    if (sub !== "schema") {
      throw new UsageError(
        sub === undefined
          ? "missing what to print (schema)"
          : `unknown subcommand '${sub}'${suggestion(sub, ["schema"])}`,
        "tailswarm config schema [node|scenario]",
      );
    }
    if (!(which in SCHEMAS)) {
      throw new UsageError(
        `no schema '${which}'${suggestion(which, Object.keys(SCHEMAS))}`,
        "tailswarm config schema [node|scenario]",
      );
    }
    if (rest.length > 0) {
      throw new UsageError(`unexpected argument '${rest[0]}'`, "tailswarm config schema [node|scenario]");
    }
    process.stdout.write(schemaText(which as keyof typeof SCHEMAS));
    return ExitCode.OK;
  });
}
