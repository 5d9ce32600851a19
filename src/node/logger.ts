/**
 * Structured logs: one JSON object per line on stderr, `{ ts, level, module, msg, ...fields }`.
 * `TAILSWARM_TRACE=mesh,engine` (or `all`) turns on debug lines for those modules whatever the
 * level, like grpc-js's GRPC_TRACE.
 *
 * @example
 * const log = createLogger({ level: "info", trace: parseTrace(process.env.TAILSWARM_TRACE) });
 * log.child("node").info("listening", { address: "127.0.0.1:7400" });
 */
import type { LogLevel } from "./config/types.js";

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
  readonly write?: (line: string) => void;
  readonly now?: () => number;
}

const RANK: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 100 };

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

export function createLogger(options: LoggerOptions, module = "node"): Logger {
  const write = options.write ?? ((line: string) => void process.stderr.write(line));
  const now = options.now ?? Date.now;
  const trace = options.trace ?? new Set<string>();
  const traced = trace.has("all") || trace.has(module);
  const emit = (level: Exclude<LogLevel, "silent">, msg: string, fields?: Record<string, unknown>): void => {
    const on =
      level === "debug" ? traced || RANK.debug >= RANK[options.level] : RANK[level] >= RANK[options.level];
    if (!on) return;
    const record: Record<string, unknown> = { ts: new Date(now()).toISOString(), level, module, msg };
    if (fields !== undefined) for (const [k, v] of Object.entries(fields)) record[k] = errorFields(v);
    let line: string;
    try {
      line = JSON.stringify(record);
    } catch {
      line = JSON.stringify({ ts: record.ts, level, module, msg, fields: "unserialisable" });
    }
    write(`${line}\n`);
  };
  return {
    debug: (m, f) => emit("debug", m, f),
    info: (m, f) => emit("info", m, f),
    warn: (m, f) => emit("warn", m, f),
    error: (m, f) => emit("error", m, f),
    tracing: traced || options.level === "debug",
    child: (name) => createLogger(options, name),
  };
}

/** A logger that writes nothing (library use, tests). */
export const silentLogger: Logger = createLogger({ level: "silent", write: () => {} });
