/**
 * A log line for a person: the JSON line logger.ts writes, as
 * `12:04:05.120 INFO  node  listening address=127.0.0.1:7400 port=7400 trace_id=… span_id=…`
 * (time of day in UTC, the level, the module, the message, then the fields as key=value, with values
 * that need it quoted as JSON; the trace ids last, whole, to paste into a trace viewer).
 *
 * @example
 * prettyLine('{"level":"info","ts":"2026-01-01T12:04:05.120Z","module":"node","msg":"listening"}\n', false);
 * // "12:04:05.120 INFO  node  listening\n"
 */

const COLORS: Record<string, string> = {
  debug: "\x1b[90m",
  info: "\x1b[32m",
  warn: "\x1b[33m",
  error: "\x1b[31m",
};
const RESET = "\x1b[0m";
const DIM = "\x1b[2m";
const HEAD = new Set(["level", "ts", "module", "msg"]);
const TRACE = ["trace_id", "span_id"] as const;

function show(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? "undefined";
}

/** A head field (level, module, msg) as text: pino writes strings there. */
function text(value: unknown): string {
  return typeof value === "string" ? value : value === undefined ? "" : show(value);
}

export function prettyLine(line: string, color: boolean): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(line) as Record<string, unknown>;
  } catch {
    return line.endsWith("\n") ? line : `${line}\n`;
  }
  const level = text(record["level"]);
  const ts = typeof record["ts"] === "string" ? record["ts"].slice(11, 23) : "";
  const parts = [
    color ? `${DIM}${ts}${RESET}` : ts,
    color ? `${COLORS[level] ?? ""}${level.toUpperCase().padEnd(5)}${RESET}` : level.toUpperCase().padEnd(5),
    text(record["module"]).padEnd(5),
    text(record["msg"]),
  ];
  for (const [k, v] of Object.entries(record)) {
    if (HEAD.has(k) || k === "trace_flags" || (TRACE as readonly string[]).includes(k)) continue;
    parts.push(`${k}=${show(v)}`);
  }
  for (const k of TRACE) {
    if (record[k] === undefined) continue;
    parts.push(color ? `${DIM}${k}=${show(record[k])}${RESET}` : `${k}=${show(record[k])}`);
  }
  return `${parts.join(" ")}\n`;
}
