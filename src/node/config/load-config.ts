/**
 * Resolves the node config from its sources, later ones winning: defaults < file (`--config` or
 * TAILSWARM_CONFIG; JSON or YAML) < `TAILSWARM_*` environment < flags. Unknown keys in the file and
 * unknown flags are errors; an unknown `TAILSWARM_*` variable is a warning (other tools share the
 * prefix). Every problem names the dotted field, the value, where it came from and what was expected;
 * all problems are reported together in one INVALID_CONFIG TailswarmError.
 *
 * @example
 * const { config } = await loadConfig({ argv: ["--listen", "127.0.0.1:0"], env: process.env });
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, extname, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { ParseArgsConfig } from "node:util";
import { parse as parseYaml } from "yaml";
import { TailswarmError } from "../../errors.js";
import { configFields, envName, extraEnv, flagName, groupsOf } from "./schema.js";
import type { FieldSpec } from "./schema.js";
import { bool } from "./field-types.js";
import type { FieldType } from "./field-types.js";
import type { NodeConfig } from "./types.js";

export type ConfigSource = "default" | "file" | "env" | "flag";

export interface ConfigInput {
  /** Flags (the arguments after `tailswarm node`). */
  readonly argv?: readonly string[];
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Relative paths resolve against this; default process.cwd(). */
  readonly cwd?: string;
}

export interface LoadedConfig {
  readonly config: NodeConfig;
  /** Absolute path of the config file, when one was read. */
  readonly file?: string;
  /** Where each key's value came from. */
  readonly sources: Readonly<Record<string, ConfigSource>>;
  /** Directory that relative handler module paths resolve against. */
  readonly handlersBaseDir: string;
  readonly warnings: readonly string[];
}

/** A command-line problem (unknown flag, missing value): exit 2, not 78. */
export class UsageError extends TailswarmError {
  constructor(message: string) {
    super("INVALID_ARGUMENT", message);
    this.name = "UsageError";
  }
}

function show(value: unknown): string {
  if (typeof value === "string") return JSON.stringify(value);
  // undefined: a structured value's part that is missing (config files hold no functions or symbols)
  const s = JSON.stringify(value) ?? "nothing";
  return s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

function distance(a: string, b: string): number {
  const d = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let prev = d[0]!;
    d[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const tmp = d[j]!;
      d[j] = Math.min(
        d[j]! + 1,
        d[j - 1]! + 1,
        prev + (a[i - 1]!.toLowerCase() === b[j - 1]!.toLowerCase() ? 0 : 1),
      );
      prev = tmp;
    }
  }
  return d[b.length]!;
}

function suggest(key: string, known: readonly string[]): string {
  const best = known.map((k) => ({ k, d: distance(key, k) })).sort((x, y) => x.d - y.d)[0];
  return best !== undefined && best.d <= Math.max(2, Math.floor(key.length / 4))
    ? ` (did you mean ${best.k}?)`
    : "";
}

function flagOptions(): ParseArgsConfig["options"] {
  const options: NonNullable<ParseArgsConfig["options"]> = {
    config: { type: "string" },
    help: { type: "boolean", short: "h" },
  };
  for (const f of configFields) {
    options[flagName(f.path)] =
      f.type === (bool as FieldType<unknown>) ? { type: "boolean" } : { type: "string", multiple: true };
  }
  return options;
}

function parseFlags(argv: readonly string[]): { values: Record<string, unknown>; help: boolean } {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: flagOptions(),
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0)
      throw new UsageError(`unexpected argument ${show(positionals[0])}; every option is a --flag`);
    const v: Record<string, unknown> = values;
    return { values: v, help: v.help === true };
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`${(err as Error).message}; run 'tailswarm node --help' for the flags`);
  }
}

function readFile(path: string): Record<string, unknown> {
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      `config: file ${show(path)} does not exist, expected a JSON or YAML file`,
    );
  }
  const text = readFileSync(path, "utf8");
  let data: unknown;
  try {
    data = extname(path).toLowerCase() === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new TailswarmError("INVALID_CONFIG", `config: cannot parse ${path}: ${(err as Error).message}`);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      `config: ${path} holds ${show(data)}, expected a mapping of keys`,
    );
  }
  return data as Record<string, unknown>;
}

function unknownFileKeys(data: Record<string, unknown>, file: string): string[] {
  const groups = groupsOf(configFields);
  const top = groups.get("") ?? [];
  const problems: string[] = [];
  for (const [key, value] of Object.entries(data)) {
    if (!top.includes(key)) {
      problems.push(`${key}: unknown key in ${file}${suggest(key, top)}; known keys: ${top.join(", ")}`);
      continue;
    }
    const sub = groups.get(key);
    if (sub === undefined) continue;
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      problems.push(`${key}: got ${show(value)} in ${file}, expected a mapping with keys ${sub.join(", ")}`);
      continue;
    }
    for (const k of Object.keys(value)) {
      if (!sub.includes(k))
        problems.push(
          `${key}.${k}: unknown key in ${file}${suggest(k, sub)}; known keys under ${key}: ${sub.join(", ")}`,
        );
    }
  }
  return problems;
}

function fileValue(data: Record<string, unknown>, path: string): unknown {
  let v: unknown = data;
  for (const part of path.split(".")) {
    if (typeof v !== "object" || v === null) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let obj = target;
  for (const part of parts.slice(0, -1)) obj = (obj[part] ??= {}) as Record<string, unknown>;
  obj[parts[parts.length - 1]!] = value;
}

function resolveField(
  f: FieldSpec,
  flags: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
  data: Record<string, unknown>,
  file: string | undefined,
): { value: unknown; source: ConfigSource } | { problem: string } {
  const flag = flags[flagName(f.path)];
  const envText = env[envName(f.path)];
  const fromFile = fileValue(data, f.path);
  const fail = (value: unknown, from: string, expected: string, at = ""): { problem: string } => ({
    problem: `${f.path}${at}: got ${show(value)} (from ${from}), expected ${expected}`,
  });
  // A structured value names the faulty part (`at`) and what is there, which may be nothing.
  const got = (r: { at?: string; value?: unknown }, whole: unknown): unknown =>
    "value" in r ? r.value : whole;
  if (flag !== undefined) {
    const from = `flag --${flagName(f.path)}`;
    if (typeof flag === "boolean") return { value: flag, source: "flag" };
    const text = (flag as string[]).join(",");
    const r = f.type.parse(text);
    return r.ok ? { value: r.value, source: "flag" } : fail(got(r, text), from, r.expected, r.at);
  }
  if (envText !== undefined && envText !== "") {
    const r = f.type.parse(envText);
    return r.ok
      ? { value: r.value, source: "env" }
      : fail(got(r, envText), `env ${envName(f.path)}`, r.expected, r.at);
  }
  if (fromFile !== undefined) {
    const r = f.type.check(fromFile);
    return r.ok
      ? { value: r.value, source: "file" }
      : fail(got(r, fromFile), `file ${file}`, r.expected, r.at);
  }
  const d = typeof f.default === "function" ? (f.default as () => unknown)() : f.default;
  return { value: d, source: "default" };
}

function crossChecks(c: NodeConfig, cwd: string): string[] {
  const problems: string[] = [];
  const { tls } = c;
  const tlsOn =
    tls.ca !== undefined || tls.cert !== undefined || tls.key !== undefined || tls.requireClientCert;
  if (tlsOn && (tls.cert === undefined || tls.key === undefined)) {
    const missing = tls.cert === undefined ? "tls.cert" : "tls.key";
    problems.push(`${missing}: got nothing, expected a PEM file path (TLS needs both tls.cert and tls.key)`);
  }
  if (tls.requireClientCert && tls.ca === undefined) {
    problems.push(
      "tls.ca: got nothing, expected a PEM CA file path (tls.requireClientCert verifies clients against it)",
    );
  }
  for (const key of ["ca", "cert", "key"] as const) {
    const p = tls[key];
    if (p !== undefined && !existsSync(resolve(cwd, p)))
      problems.push(`tls.${key}: got ${show(p)}, expected a readable PEM file (not found)`);
  }
  const port = Number(c.listen.slice(c.listen.lastIndexOf(":") + 1));
  if (c.metrics.prometheusPort !== 0 && c.metrics.prometheusPort === port) {
    problems.push(
      `metrics.prometheusPort: got ${c.metrics.prometheusPort}, expected a port other than the gRPC port of listen`,
    );
  }
  if (c.probe.timeoutMs > c.probe.intervalMs) {
    problems.push(
      `probe.timeoutMs: got ${c.probe.timeoutMs}, expected at most probe.intervalMs (${c.probe.intervalMs})`,
    );
  }
  return problems;
}

/** Settings that are valid but have no effect with the others. */
function crossWarnings(c: NodeConfig): string[] {
  const warnings: string[] = [];
  const { policy, primitives } = c.routing;
  if (primitives !== undefined && policy !== "mabp" && policy !== "cost-bp") {
    warnings.push(
      `routing.primitives is set, but routing.policy ${policy} does not read primitives (mabp and cost-bp do); ignored`,
    );
  }
  if (c.tls.serverName !== undefined && c.tls.cert === undefined) {
    warnings.push("tls.serverName is set, but TLS is off (no tls.cert); ignored");
  }
  return warnings;
}

/** True when the flags ask for help (the caller prints usage and exits 0). */
export function wantsHelp(argv: readonly string[]): boolean {
  return argv.includes("--help") || argv.includes("-h");
}

export async function loadConfig(input: ConfigInput = {}): Promise<LoadedConfig> {
  const env = input.env ?? process.env;
  const cwd = input.cwd ?? process.cwd();
  const { values: flags } = parseFlags(input.argv ?? []);
  const configPath = (flags.config as string | undefined) ?? (env.TAILSWARM_CONFIG || undefined);
  const file = configPath === undefined ? undefined : resolve(cwd, configPath);
  const data = file === undefined ? {} : readFile(file);

  const problems = file === undefined ? [] : unknownFileKeys(data, file);
  const warnings: string[] = [];
  const knownEnv = new Set([...configFields.map((f) => envName(f.path)), ...Object.keys(extraEnv)]);
  for (const name of Object.keys(env)) {
    if (name.startsWith("TAILSWARM_") && !knownEnv.has(name)) {
      warnings.push(`env ${name} is not a node setting${suggest(name, [...knownEnv])}; ignored`);
    }
  }

  const out: Record<string, unknown> = {};
  const sources: Record<string, ConfigSource> = {};
  for (const f of configFields) {
    const r = resolveField(f, flags, env, data, file);
    if ("problem" in r) {
      problems.push(r.problem);
      continue;
    }
    sources[f.path] = r.source;
    if (r.value !== undefined) setPath(out, f.path, r.value);
  }
  if (problems.length === 0) problems.push(...crossChecks(out as unknown as NodeConfig, cwd));
  if (problems.length === 0) warnings.push(...crossWarnings(out as unknown as NodeConfig));
  if (problems.length > 0) {
    throw new TailswarmError("INVALID_CONFIG", `invalid node config:\n  ${problems.join("\n  ")}`);
  }
  return {
    config: out as unknown as NodeConfig,
    ...(file !== undefined && { file }),
    sources,
    handlersBaseDir: sources.handlers === "file" && file !== undefined ? dirname(file) : cwd,
    warnings,
  };
}
