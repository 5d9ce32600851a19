/**
 * `tailswarm node [--config FILE] [--listen HOST:PORT] [...]`: run a swarm node until SIGTERM/SIGINT.
 * Every config key has a flag (docs/configuration.md); exit codes in src/node/exit-codes.ts.
 */
import { TailswarmError } from "../../errors.js";
import { loadConfig, UsageError as ConfigUsageError, wantsHelp } from "../../node/config/load-config.js";
import { configLeaves, envName, extraEnv, flagName } from "../../node/config/schema.js";
import { ExitCode } from "../../node/exit-codes.js";
import { createLogger, parseTrace } from "../../node/logger.js";
import type { Logger } from "../../node/logger.js";
import { SwarmNode } from "../../node/node.js";
import type { TelemetrySetup } from "../../node/node.js";
import { UsageError } from "../args.js";
import { routeGrpcLog, startFailure } from "../daemon-errors.js";
import { serveUntilSignal } from "../shutdown-on-signal.js";
import { CliError, guard } from "../verb-errors.js";
import { cliVersion } from "../version.js";

function help(): string {
  const rows = configLeaves.map((f) => [`--${flagName(f.path)}`, envName(f.path), f.doc] as const);
  const w1 = Math.max(...rows.map((r) => r[0].length));
  const w2 = Math.max(...rows.map((r) => r[1].length));
  const lines = rows.map(([a, b, c]) => `  ${a.padEnd(w1)}  ${b.padEnd(w2)}  ${c}`);
  const extra = Object.entries(extraEnv).map(([k, v]) => `  ${"".padEnd(w1)}  ${k.padEnd(w2)}  ${v}`);
  return (
    `usage: tailswarm node [--config FILE] [flags]\n\n` +
    `Run a swarm node. Settings come from defaults < the config file (JSON or YAML) < TAILSWARM_* env < flags.\n` +
    `Lists (peers, dns, handlers) are comma-separated in env and flags. See docs/configuration.md.\n\n` +
    `  ${"--config FILE".padEnd(w1)}  ${"TAILSWARM_CONFIG".padEnd(w2)}  config file\n${lines.join("\n")}\n${extra.join("\n")}\n` +
    `  ${"--version".padEnd(w1)}  ${"".padEnd(w2)}  print the tailswarm version\n\n` +
    `exit codes: 0 stopped cleanly, 1 runtime failure, 2 usage, 78 bad config, 130/143 forced by a second SIGINT/SIGTERM\n`
  );
}

/**
 * Telemetry for the daemon: OTel SDK from the standard OTEL_* variables, the Prometheus port of
 * `metrics.prometheusPort`, the flight recorder. A telemetry failure is logged; the node still runs.
 */
async function telemetrySetup(log: Logger): Promise<TelemetrySetup> {
  const { nodeTelemetry } = await import("../../telemetry/sdk/node-telemetry.js");
  const setup = nodeTelemetry();
  return async (ctx) => {
    try {
      return await setup(ctx);
    } catch (err) {
      log.warn("telemetry disabled: setup failed", { error: err });
      return undefined;
    }
  };
}

export function run(argv: string[]): Promise<number> {
  return guard("node", () => serve(argv));
}

async function serve(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) {
    process.stdout.write(help());
    return ExitCode.OK;
  }
  let loaded;
  try {
    loaded = await loadConfig({ argv, env: process.env });
  } catch (err) {
    if (err instanceof ConfigUsageError) throw new UsageError(err.message);
    if (TailswarmError.is(err, "INVALID_CONFIG")) {
      throw new CliError(err.message, { exitCode: ExitCode.CONFIG, cause: err });
    }
    throw err;
  }
  const { config } = loaded;
  const log = createLogger({ level: config.logLevel, trace: parseTrace(process.env.TAILSWARM_TRACE) });
  const nodeLog = log.child("node");
  for (const w of loaded.warnings) nodeLog.warn(w);
  log.child("config").debug("config resolved", { file: loaded.file, sources: loaded.sources });
  routeGrpcLog(log);

  const starting = SwarmNode.start({
    config,
    handlersBaseDir: loaded.handlersBaseDir,
    log,
    telemetry: await telemetrySetup(log.child("telemetry")),
    version: cliVersion(),
  }).then(
    (node) => ({ stop: () => node.stop(), force: () => node.forceStop() }),
    (err: unknown) => {
      throw startFailure(err, "--listen, TAILSWARM_LISTEN or listen: in the config file");
    },
  );
  return serveUntilSignal(starting, { log: nodeLog, fields: { drainGraceMs: config.drainGraceMs } }).then(
    (code) => {
      // Handlers or exporters may hold timers; the daemon's work is done, so do not wait for them.
      setTimeout(() => process.exit(code), 200).unref();
      return code;
    },
  );
}
