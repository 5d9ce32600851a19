/**
 * Structured logs on stderr, through pino: one JSON object per line, `{ level, ts, module, msg,
 * ...fields }`, plus `trace_id`, `span_id` and `trace_flags` of the span active where the line is
 * written (OpenTelemetry's fields for trace context in non-OTLP logs), so a collector pairs a line with
 * its trace. On a terminal the same lines are printed for a person instead (pretty-log.ts).
 * `TAILSWARM_TRACE=mesh,engine` (or `all`) turns on debug lines for those modules whatever the level,
 * like grpc-js's GRPC_TRACE.
 *
 * @example
 * const log = createLogger({ level: "info", trace: parseTrace(process.env.TAILSWARM_TRACE) });
 * log.child("node").info("listening", { address: "127.0.0.1:7400" });
 */
import { context, isSpanContextValid, trace } from "@opentelemetry/api";
import { pino } from "pino";
import type { DestinationStream, Logger as PinoLogger } from "pino";
import type { LogLevel } from "./config/types.js";
import { prettyLine } from "./pretty-log.js";

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** True when debug lines of this logger's module are written (skip building costly fields). */
  readonly tracing: boolean;
  child(module: string): Logger;
}

export interface LoggerOptions {
  readonly level: LogLevel;
  /** Modules whose debug lines are written regardless of `level`. */
  readonly trace?: ReadonlySet<string>;
  /** Where each line goes (with its newline). Default: stderr. */
  readonly write?: (line: string) => void;
  /**
   * `json`, or `pretty` (one readable line per entry, for a person). Default: `pretty` when the lines
   * go to stderr and stderr is a terminal, `json` otherwise.
   */
  readonly format?: "json" | "pretty";
  readonly now?: () => number;
}

export function parseTrace(value: string | undefined): Set<string> {
  return new Set(
    (value ?? "")
      .split(",")
      .map((s) => s.trim().toLowerCase())
      .filter((s) => s.length > 0),
  );
}

function errorFields(value: unknown): unknown {
  if (!(value instanceof Error)) return value;
  const code = (value as { code?: unknown }).code;
  return { name: value.name, message: value.message, ...(code !== undefined && { code }) };
}

/** The active span's ids, as OpenTelemetry names them for log records outside OTLP. */
function traceFields(): Record<string, string> {
  const span = trace.getSpan(context.active());
  if (span === undefined) return {};
  const sc = span.spanContext();
  if (!isSpanContextValid(sc)) return {};
  return {
    trace_id: sc.traceId,
    span_id: sc.spanId,
    trace_flags: sc.traceFlags.toString(16).padStart(2, "0"),
  };
}

function root(options: LoggerOptions): PinoLogger {
  const toStderr = options.write === undefined;
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const pretty = (options.format ?? (toStderr && process.stderr.isTTY ? "pretty" : "json")) === "pretty";
  const color = pretty && toStderr && process.stderr.isTTY && process.env["NO_COLOR"] === undefined;
  const stream: DestinationStream = {
    write: pretty ? (line) => write(prettyLine(line, color)) : write,
  };
  const now = options.now ?? Date.now;
  return pino(
    {
      // Our levels decide per module which lines are written; pino writes what it is given.
      level: "debug",
      base: null,
      timestamp: () => `,"ts":"${new Date(now()).toISOString()}"`,
      formatters: { level: (label) => ({ level: label }) },
      // Errors are shown as { name, message, code } (errorFields), under any key: no stack in a log line.
      serializers: { err: (v: unknown) => v },
      mixin: traceFields,
    },
    stream,
  );
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

function moduleLogger(options: LoggerOptions, base: PinoLogger, module: string): Logger {
  const trace = options.trace ?? new Set<string>();
  const traced = trace.has("all") || trace.has(module);
  const log = base.child({ module });
  const on = (level: Exclude<LogLevel, "silent">): boolean =>
    level === "debug" ? traced || RANK.debug >= RANK[options.level] : RANK[level] >= RANK[options.level];
  const emit = (level: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>): void => {
    if (!on(level)) return;
    if (fields === undefined) {
      log[level](msg);
      return;
    }
    const record: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(fields)) record[k] = errorFields(v);
    log[level](record, msg);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    tracing: traced || options.level === "debug",
    child: (name) => moduleLogger(options, base, name),
  };
}

export function createLogger(options: LoggerOptions, module = "node"): Logger {
  if (options.level === "silent" && (options.trace?.size ?? 0) === 0) return silent;
  return moduleLogger(options, root(options), module);
}

const silent: Logger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
  tracing: false,
  child: () => silent,
};

/** A logger that writes nothing (library use, tests). */
export const silentLogger: Logger = silent;
