/**
 * `tailswarm host --config FILE [--config FILE ...]`: several swarm nodes in one process, one per
 * config file, each with its own id, port, handlers, membership and coordinator, exactly as
 * `tailswarm node --config FILE` would run it. For testbeds and development machines, where one Node
 * process per node costs more than the work: every process pays its own startup, memory and JIT
 * warm-up, and a process that serves a few calls a second never warms up.
 *
 * The nodes share the process's event loop and the `TAILSWARM_*` environment (it applies to every
 * config). OpenTelemetry's SDK is not installed here: run nodes that export telemetry with
 * `tailswarm node`. Each node keeps a flight recorder and serves it (`tailswarm decisions`), as
 * `tailswarm node` does. Signals and exit codes are those of `tailswarm node`: the first
 * SIGTERM/SIGINT drains every node, a second forces the exit (130/143).
 */
import { TailswarmError } from "../../errors.js";
import { loadConfig, UsageError as ConfigUsageError } from "../../node/config/load-config.js";
import type { LoadedConfig } from "../../node/config/load-config.js";
import { ExitCode } from "../../node/exit-codes.js";
import { createLogger, parseTrace } from "../../node/logger.js";
import { SwarmNode } from "../../node/node.js";
import type { TelemetrySetup } from "../../node/node.js";
import { decisionsSource } from "../../telemetry/decisions-service.js";
import { FlightRecorder } from "../../telemetry/flight-recorder.js";
import { formatHelp, parseFlags, UsageError } from "../args.js";
import { routeGrpcLog, startFailure } from "../daemon-errors.js";
import { serveUntilSignal } from "../shutdown-on-signal.js";
import type { Stoppable } from "../shutdown-on-signal.js";
import { CliError, guard } from "../verb-errors.js";
import { cliVersion } from "../version.js";

const FLAGS = {
  config: {
    type: "string",
    valueName: "FILE",
    multiple: true,
    description: "a node config file (JSON or YAML); give one per node",
  },
} as const;

const USAGE = "tailswarm host --config FILE [--config FILE ...]";
const DESCRIPTION =
  "Run several swarm nodes in one process, one per config file (see 'tailswarm node --help' for the keys).\n" +
  "TAILSWARM_* variables apply to every node; each node serves its decisions ('tailswarm decisions');\n" +
  "telemetry export needs 'tailswarm node'.\n" +
  "exit codes: 0 stopped cleanly, 1 runtime failure, 2 usage, 78 bad config, 130/143 forced by a second signal";

/** A node's flight recorder, served as tailswarm.v1.Decisions (what nodeTelemetry gives `tailswarm node`). */
const flightRecorder: TelemetrySetup = (ctx) => {
  const recorder = new FlightRecorder();
  return { observer: recorder, decisions: decisionsSource(ctx.nodeId, recorder) };
};

export function run(argv: string[]): Promise<number> {
  return guard("host", () => serve(argv));
}

async function serve(argv: string[]): Promise<number> {
  const parsed = parseFlags(argv, FLAGS);
  if (parsed.help) {
    process.stdout.write(formatHelp(USAGE, DESCRIPTION, FLAGS));
    return ExitCode.OK;
  }
  const files = parsed.values.config ?? [];
  if (files.length === 0) throw new UsageError("flag --config is required (one per node)");

  const loaded: LoadedConfig[] = [];
  for (const file of files) {
    try {
      loaded.push(
        await loadConfig({ argv: ["--config", file], env: { ...process.env, TAILSWARM_CONFIG: "" } }),
      );
    } catch (err) {
      if (err instanceof ConfigUsageError) throw new UsageError(`${file}: ${err.message}`);
      if (TailswarmError.is(err, "INVALID_CONFIG")) {
        throw new CliError(`${file}: ${err.message}`, { exitCode: ExitCode.CONFIG, cause: err });
      }
      throw err;
    }
  }
  const ids = loaded.map((l) => l.config.nodeId);
  const twice = ids.find((id, i) => ids.indexOf(id) !== i);
  if (twice !== undefined) {
    throw new CliError(`nodeId ${JSON.stringify(twice)} is in more than one config file`, {
      exitCode: ExitCode.CONFIG,
      hint: "give each config its own nodeId",
    });
  }

  const trace = parseTrace(process.env.TAILSWARM_TRACE);
  const hostLog = createLogger({ level: loaded[0]!.config.logLevel, trace }, "host");
  routeGrpcLog(hostLog);
  const nodes: SwarmNode[] = [];
  const startAll = async (): Promise<Stoppable> => {
    for (const [i, { config, handlersBaseDir, warnings }] of loaded.entries()) {
      // Each node's lines carry its id, since they share stderr.
      const prefix = `{"nodeId":${JSON.stringify(config.nodeId)},`;
      const log = createLogger({
        level: config.logLevel,
        trace,
        write: (line) => void process.stderr.write(prefix + line.slice(1)),
      });
      for (const w of warnings) log.child("node").warn(w);
      try {
        nodes.push(
          await SwarmNode.start({
            config,
            handlersBaseDir,
            log,
            telemetry: flightRecorder,
            version: cliVersion(),
          }),
        );
      } catch (err) {
        for (const n of nodes) n.forceStop();
        throw startFailure(err, `listen: in ${files[i]}`, `${files[i]}: `);
      }
    }
    hostLog.info("hosting", { nodes: nodes.map((n) => ({ nodeId: n.nodeId, address: n.address })) });
    return {
      stop: () => Promise.all(nodes.map((n) => n.stop())),
      force: () => {
        for (const n of nodes) n.forceStop();
      },
    };
  };
  const code = await serveUntilSignal(startAll(), { log: hostLog, fields: { nodes: loaded.length } });
  // Handlers may hold timers; the host's work is done, so do not wait for them.
  setTimeout(() => process.exit(code), 200).unref();
  return code;
}
