/**
 * The two container-facing modes of `tailswarm testbed` (docs/testbed.md, docker/README.md):
 *
 * - `--emit-compose DIR`: write the scenario's containerised swarm (compose.yml, one node config per
 *   peer and coordinator, the scenario file) and exit — docker/testbed.sh runs it on every run;
 * - `--attach NAME=HOST:PORT,...` (with `--attach-peers '{id}:PORT'` for the direct fan-out
 *   measurement): drive coordinators that are already running instead of launching node processes;
 *   same load, same report, plus the `attached` section (peers marked down, how fan-outs resolved).
 */
import { emitCompose } from "../../testbed/compose-emit.js";
import { parseAttach, runAttached } from "../../testbed/attach.js";
import type { Scenario } from "../../testbed/scenario-types.js";
import { EXIT } from "../args.js";

export const ATTACH_FLAGS = {
  attach: {
    type: "string",
    valueName: "NAME=HOST:PORT,...",
    description: "drive the scenario's coordinators already running at these addresses (launch nothing)",
  },
  "attach-peers": {
    type: "string",
    valueName: "TEMPLATE",
    description: "with --attach: each peer's address for the direct fan-out measurement, e.g. '{id}:7400'",
  },
  "emit-compose": {
    type: "string",
    valueName: "DIR",
    description:
      "write the scenario's containerised swarm (compose.yml, node configs, the observability overlay) to DIR and exit",
  },
} as const;

export async function emitComposeCommand(scenario: Scenario, dir: string): Promise<number> {
  const written = await emitCompose(scenario, dir);
  process.stderr.write(
    `tailswarm testbed: ${written.length} files in ${dir} (compose.yml, nodes/, compose.observability.yml, observability/)\n`,
  );
  return EXIT.ok;
}

export async function attachCommand(
  scenario: Scenario,
  values: {
    attach: string;
    "attach-peers"?: string | undefined;
    out?: string | undefined;
    json?: boolean | undefined;
  },
  signal: AbortSignal,
): Promise<number> {
  const coordinators = parseAttach(values.attach);
  const template = values["attach-peers"];
  const result = await runAttached({
    scenario,
    coordinators,
    ...(template !== undefined && { peerAddress: (id: string) => template.replaceAll("{id}", id) }),
    outDir: values.out ?? `testbed/out/${scenario.name}-attached`,
    signal,
  });
  process.stdout.write(values.json === true ? `${JSON.stringify(result.report, null, 2)}\n` : result.table);
  process.stderr.write(`report: ${result.files.json}\n        ${result.files.html}\n`);
  return signal.aborted ? 130 : EXIT.ok;
}
