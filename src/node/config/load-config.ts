/**
 * Resolves the node config from its sources, later ones winning: defaults < file (`--config` or
 * TAILSWARM_CONFIG; JSON or YAML) < `TAILSWARM_*` environment < flags, and validates the result
 * against the one schema (schema.ts). Unknown keys in the file and unknown flags are errors; an
 * unknown `TAILSWARM_*` variable is a warning (other tools share the prefix). Every problem is in the
 * one message style, naming the dotted field, the value, where it came from and what was expected;
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
import { TailswarmError, expectation } from "../../errors.js";
import { didYouMean } from "../../util/did-you-mean.js";
import { stretchSlotsProblem } from "../../estimate/options.js";
import { describeIssues } from "./issues.js";
import type { ConfigLeaf } from "./leaves.js";
import { configLeaves, envName, extraEnv, flagName, nodeConfigSchema } from "./schema.js";
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

const BOOLEAN_TEXT: Readonly<Record<string, boolean>> = {
  true: true,
  "1": true,
  yes: true,
  on: true,
  false: false,
  "0": false,
  no: false,
  off: false,
};

function flagOptions(): ParseArgsConfig["options"] {
  const options: NonNullable<ParseArgsConfig["options"]> = {
    config: { type: "string" },
    help: { type: "boolean", short: "h" },
  };
  for (const leaf of configLeaves) {
    options[flagName(leaf.path)] =
      leaf.info.kind === "boolean" ? { type: "boolean" } : { type: "string", multiple: true };
  }
  return options;
}

function parseFlags(argv: readonly string[]): Record<string, unknown> {
  try {
    const { values, positionals } = parseArgs({
      args: [...argv],
      options: flagOptions(),
      strict: true,
      allowPositionals: true,
    });
    if (positionals.length > 0)
      throw new UsageError(
        expectation("argument", positionals[0], "no positional argument: every option is a --flag"),
      );
    return values;
  } catch (err) {
    if (err instanceof UsageError) throw err;
    const e = err as NodeJS.ErrnoException;
    const unknown = /^Unknown option '(--?[^']*)'/.exec(e.message);
    if (e.code === "ERR_PARSE_ARGS_UNKNOWN_OPTION" && unknown !== null) {
      const flag = unknown[1]!;
      const near = flag.startsWith("--")
        ? didYouMean(
            flag,
            Object.keys(flagOptions() ?? {}).map((n) => `--${n}`),
          )
        : undefined;
      throw new UsageError(`unknown flag '${flag}'${near === undefined ? "" : ` (did you mean ${near}?)`}`);
    }
    throw new UsageError(e.message);
  }
}

function readFile(path: string, from: string): Record<string, unknown> {
  if (!existsSync(path) || !statSync(path).isFile()) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation("config", path, "a JSON or YAML file (not found)", from),
    );
  }
  const text = readFileSync(path, "utf8");
  let data: unknown;
  try {
    data = extname(path).toLowerCase() === ".json" ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    const kind = extname(path).toLowerCase() === ".json" ? "JSON" : "YAML";
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation("config", path, `a file of valid ${kind} (${(err as Error).message})`, from),
    );
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== "object" || Array.isArray(data)) {
    throw new TailswarmError(
      "INVALID_CONFIG",
      expectation("config", data, "a mapping of keys", `file ${path}`),
    );
  }
  return data as Record<string, unknown>;
}

function valueAt(data: Record<string, unknown>, path: string): unknown {
  let v: unknown = data;
  for (const part of path.split(".")) {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

/** Sets `path` in `target`, making the groups on the way (a group the file gave as a non-mapping stays, and fails). */
function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split(".");
  let obj = target;
  for (const part of parts.slice(0, -1)) {
    const next = obj[part];
    if (typeof next !== "object" || next === null || Array.isArray(next)) obj[part] = {};
    else obj[part] = { ...(next as Record<string, unknown>) };
    obj = obj[part] as Record<string, unknown>;
  }
  obj[parts[parts.length - 1]!] = value;
}

/** Env or flag text as the value the key takes: numbers and booleans read, the rest left to the schema. */
function fromText(leaf: ConfigLeaf, text: string): unknown {
  const t = text.trim();
  if (leaf.info.kind === "number") return t === "" || !Number.isFinite(Number(t)) ? text : Number(t);
  if (leaf.info.kind === "boolean") return BOOLEAN_TEXT[t.toLowerCase()] ?? text;
  return leaf.info.kind === "text" ? t : text;
}

interface Given {
  readonly source: "env" | "flag";
  readonly label: string;
  readonly text: string;
}

/** The env or flag value of `leaf`, when one is given (the flag wins). */
function givenText(
  leaf: ConfigLeaf,
  flags: Record<string, unknown>,
  env: Readonly<Record<string, string | undefined>>,
): Given | boolean | undefined {
  const flag = flags[flagName(leaf.path)];
  if (typeof flag === "boolean") return flag;
  if (flag !== undefined)
    return { source: "flag", label: `flag --${flagName(leaf.path)}`, text: (flag as string[]).join(",") };
  const envText = env[envName(leaf.path)];
  if (envText !== undefined && envText !== "")
    return { source: "env", label: `env ${envName(leaf.path)}`, text: envText };
  return undefined;
}

function crossChecks(c: NodeConfig, cwd: string, from: (path: string) => string | undefined): string[] {
  const problems: string[] = [];
  const { tls } = c;
  const tlsOn =
    tls.ca !== undefined || tls.cert !== undefined || tls.key !== undefined || tls.requireClientCert;
  if (tlsOn && (tls.cert === undefined || tls.key === undefined)) {
    const missing = tls.cert === undefined ? "tls.cert" : "tls.key";
    problems.push(expectation(missing, undefined, "a PEM file path (TLS needs both tls.cert and tls.key)"));
  }
  if (tls.requireClientCert && tls.ca === undefined) {
    problems.push(
      expectation(
        "tls.ca",
        undefined,
        "a PEM CA file path (tls.requireClientCert verifies clients against it)",
      ),
    );
  }
  for (const key of ["ca", "cert", "key"] as const) {
    const p = tls[key];
    if (p !== undefined && !existsSync(resolve(cwd, p)))
      problems.push(expectation(`tls.${key}`, p, "a readable PEM file (not found)", from(`tls.${key}`)));
  }
  const port = Number(c.listen.slice(c.listen.lastIndexOf(":") + 1));
  if (c.metrics.prometheusPort !== 0 && c.metrics.prometheusPort === port) {
    problems.push(
      expectation(
        "metrics.prometheusPort",
        c.metrics.prometheusPort,
        "a port other than the gRPC port of listen",
        from("metrics.prometheusPort"),
      ),
    );
  }
  if (c.probe.timeoutMs > c.probe.intervalMs) {
    problems.push(
      expectation(
        "probe.timeoutMs",
        c.probe.timeoutMs,
        `at most probe.intervalMs (${c.probe.intervalMs})`,
        from("probe.timeoutMs"),
      ),
    );
  }
  const stretch = stretchSlotsProblem(c.estimator);
  if (stretch !== undefined) {
    problems.push(
      expectation(
        "estimator.windowMaxStretch",
        c.estimator.windowMaxStretch,
        stretch,
        from("estimator.windowMaxStretch"),
      ),
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
  const flags = parseFlags(input.argv ?? []);
  const flagConfig = flags.config as string | undefined;
  const configPath = flagConfig ?? (env.TAILSWARM_CONFIG || undefined);
  const file = configPath === undefined ? undefined : resolve(cwd, configPath);
  const data =
    file === undefined
      ? {}
      : readFile(file, flagConfig !== undefined ? "flag --config" : "env TAILSWARM_CONFIG");
  const fileLabel = `file ${file}`;

  const warnings: string[] = [];
  const knownEnv = [...configLeaves.map((l) => envName(l.path)), ...Object.keys(extraEnv)];
  for (const name of Object.keys(env)) {
    if (name.startsWith("TAILSWARM_") && !knownEnv.includes(name)) {
      const near = didYouMean(name, knownEnv);
      warnings.push(
        `env ${name} is not a node setting${near === undefined ? "" : ` (did you mean ${near}?)`}; ignored`,
      );
    }
  }

  // The file's document with each env or flag value put in place of the file's: one input to validate.
  const merged: Record<string, unknown> = structuredClone(data);
  const sources: Record<string, ConfigSource> = {};
  const given = new Map<string, Given>();
  const problems: string[] = [];
  for (const leaf of configLeaves) {
    const g = givenText(leaf, flags, env);
    if (typeof g === "boolean") {
      setPath(merged, leaf.path, g);
      sources[leaf.path] = "flag";
      continue;
    }
    if (g !== undefined) {
      if (leaf.info.fileOnly !== undefined) {
        problems.push(
          expectation(
            leaf.path,
            g.text,
            `${leaf.info.fileOnly} given in the config file (JSON or YAML); env and flags cannot carry it`,
            g.label,
          ),
        );
        continue;
      }
      setPath(merged, leaf.path, fromText(leaf, g.text));
      sources[leaf.path] = g.source;
      given.set(leaf.path, g);
      continue;
    }
    sources[leaf.path] = valueAt(data, leaf.path) !== undefined ? "file" : "default";
  }

  const leafOf = (path: readonly PropertyKey[]): ConfigLeaf | undefined =>
    configLeaves.find((l) => l.path.split(".").every((part, i) => path[i] === part));
  const result = nodeConfigSchema.safeParse(merged, { reportInput: true });
  if (!result.success) {
    problems.push(
      ...describeIssues(nodeConfigSchema, result.error.issues, merged, (path) => {
        const leaf = leafOf(path);
        const g = leaf === undefined ? undefined : given.get(leaf.path);
        if (g === undefined) return { label: fileLabel };
        if (path.length !== leaf!.path.split(".").length) return { label: g.label };
        const note = leaf!.info.kind === "boolean" ? " (also 1/0, yes/no, on/off)" : "";
        return { label: g.label, text: g.text, note };
      }),
    );
  }
  const labelOf = (path: string): string | undefined => {
    const s = sources[path];
    return s === "file"
      ? fileLabel
      : s === "env" || s === "flag"
        ? (given.get(path)?.label ?? `flag --${flagName(path)}`)
        : undefined;
  };
  if (result.success && problems.length === 0) problems.push(...crossChecks(result.data, cwd, labelOf));
  if (problems.length > 0 || !result.success) {
    throw new TailswarmError("INVALID_CONFIG", `invalid node config:\n  ${problems.join("\n  ")}`);
  }
  const config = result.data;
  warnings.push(...crossWarnings(config));
  return {
    config,
    ...(file !== undefined && { file }),
    sources,
    handlersBaseDir: sources.handlers === "file" && file !== undefined ? dirname(file) : cwd,
    warnings,
  };
}
