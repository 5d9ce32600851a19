/**
 * The flag parser every verb shares: node:util parseArgs underneath, with errors that name the flag
 * (unknown, missing value, given twice, not a number) instead of parseArgs' generic ones, and a help
 * text generated from the same spec.
 */
import { parseArgs } from "node:util";
import { TailswarmError, expectation } from "../errors.js";
import { didYouMean } from "../util/did-you-mean.js";

/** Exit codes of every verb. */
export const EXIT = { ok: 0, failure: 1, usage: 2, violation: 3 } as const;

export type FlagSpec =
  | { readonly type: "boolean"; readonly description: string; readonly short?: string }
  | {
      readonly type: "string";
      readonly description: string;
      readonly short?: string;
      /** Placeholder in help, e.g. `MS`. Default `VALUE`. */
      readonly valueName?: string;
      /** May be given more than once; the values come back as an array. */
      readonly multiple?: boolean;
    };

export type FlagValues<S extends Record<string, FlagSpec>> = {
  [K in keyof S]?: S[K] extends { type: "boolean" }
    ? boolean
    : S[K] extends { multiple: true }
      ? string[]
      : string;
};

/**
 * A command line the verb cannot run: exit 2, the message names the flag. `hint` says what to do
 * (default: the verb's --help).
 */
export class UsageError extends TailswarmError {
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super("INVALID_ARGUMENT", message);
    this.name = "UsageError";
    this.hint = hint;
  }
}

/**
 * ` (did you mean X?)` when one of `known` is close to `word` (a few letters off, or the only one that
 * starts with it or contains it: `p99` → `p99-boundary`), else "".
 */
export function suggestion(word: string, known: readonly string[]): string {
  const w = word.toLowerCase();
  const containing = w.length < 3 ? [] : known.filter((k) => k.toLowerCase().includes(w));
  const near = didYouMean(word, known) ?? (containing.length === 1 ? containing[0] : undefined);
  return near === undefined ? "" : ` (did you mean ${near}?)`;
}

/** A value that must be one of `known`: returned as is, or a UsageError naming the flag and the nearest. */
export function oneOf<T extends string>(flag: string, value: string, known: readonly T[]): T {
  if ((known as readonly string[]).includes(value)) return value as T;
  throw new UsageError(
    `${expectation(flag, value, `one of ${known.join(", ")}`)}${suggestion(value, known)}`,
  );
}

const HELP: FlagSpec = { type: "boolean", short: "h", description: "show this help" };
/** Answered by main.ts for every verb, before the verb's own flags are parsed. */
const VERSION: FlagSpec = { type: "boolean", description: "print the tailswarm version" };

/**
 * Parse `argv` against `spec`. `--help`/`-h` is always accepted and reported as `help`.
 *
 * @example
 * const spec = { "budget-ms": { type: "string", valueName: "MS", description: "budget" } } as const;
 * const { values, help } = parseFlags(["--budget-ms", "90"], spec);
 * const budget = numberFlag(values, "budget-ms", { required: true }); // 90
 */
export function parseFlags<S extends Record<string, FlagSpec>>(
  argv: readonly string[],
  spec: S,
  opts: { positionals?: boolean } = {},
): { values: FlagValues<S>; positionals: string[]; help: boolean } {
  const all: Record<string, FlagSpec> = { help: HELP, ...spec };
  const { tokens } = parseArgs({
    args: [...argv],
    options: all,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const values: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  let help = false;
  for (const token of tokens) {
    if (token.kind === "positional") {
      if (!opts.positionals)
        throw new UsageError(`unexpected argument '${token.value}' (this verb takes only flags)`);
      positionals.push(token.value);
      continue;
    }
    if (token.kind !== "option") continue;
    const flag = all[token.name];
    if (flag === undefined) {
      const known = Object.keys(all).map((n) => `--${n}`);
      const near = token.rawName.startsWith("--") ? suggestion(token.rawName, known) : "";
      throw new UsageError(
        near === ""
          ? `unknown flag '${token.rawName}' (expected one of ${known.join(", ")})`
          : `unknown flag '${token.rawName}'${near}`,
      );
    }
    const name = `--${token.name}`;
    if (flag.type === "boolean") {
      if (token.value !== undefined)
        throw new UsageError(expectation(name, token.value, "no value (a flag without one)"));
      if (token.name === "help") help = true;
      else values[token.name] = true;
      continue;
    }
    const value = token.value;
    if (value === undefined || (!token.inlineValue && value.startsWith("--"))) {
      throw new UsageError(`flag ${name} needs a value (${name} ${flag.valueName ?? "VALUE"})`);
    }
    if (flag.multiple) {
      const list = (values[token.name] as string[] | undefined) ?? [];
      list.push(value);
      values[token.name] = list;
    } else {
      if (values[token.name] !== undefined) throw new UsageError(`flag ${name} given more than once`);
      values[token.name] = value;
    }
  }
  return { values: values as FlagValues<S>, positionals, help };
}

const NUMBER = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

/**
 * A flag's value as a finite number; undefined when absent and not required.
 * Accepts decimal notation only (`90`, `-5`, `2.5`, `1e3`); rejects `''`, `0x10`, `Infinity`, `NaN`.
 */
export function numberFlag(
  values: Readonly<Record<string, unknown>>,
  name: string,
  opts: { required: true; min?: number },
): number;
export function numberFlag(
  values: Readonly<Record<string, unknown>>,
  name: string,
  opts?: { required?: boolean; min?: number },
): number | undefined;
export function numberFlag(
  values: Readonly<Record<string, unknown>>,
  name: string,
  opts: { required?: boolean; min?: number } = {},
): number | undefined {
  const raw = values[name];
  if (raw === undefined) {
    if (opts.required) throw new UsageError(`missing required flag --${name}`);
    return undefined;
  }
  const n = typeof raw === "string" && NUMBER.test(raw.trim()) ? Number(raw) : NaN;
  if (!Number.isFinite(n)) throw new UsageError(expectation(`--${name}`, raw, "a finite number"));
  if (opts.min !== undefined && n < opts.min) {
    throw new UsageError(expectation(`--${name}`, n, `a number >= ${opts.min}`));
  }
  return n;
}

/** Throws when more than one of `names` was given. */
export function exclusiveFlags(values: Readonly<Record<string, unknown>>, names: readonly string[]): void {
  const given = names.filter((n) => values[n] !== undefined);
  if (given.length > 1)
    throw new UsageError(`flags ${given.map((n) => `--${n}`).join(" and ")} exclude each other`);
}

/** Help text: usage line, description, then one line per flag from the same spec the parser uses. */
export function formatHelp(usage: string, description: string, spec: Record<string, FlagSpec>): string {
  const rows = Object.entries({ ...spec, help: HELP, version: VERSION }).map(([name, f]) => {
    const short = f.short ? `-${f.short}, ` : "";
    const value = f.type === "string" ? ` ${f.valueName ?? "VALUE"}` : "";
    return [`${short}--${name}${value}`, f.description] as const;
  });
  const width = Math.max(...rows.map(([left]) => left.length));
  const lines = rows.map(([left, right]) => `  ${left.padEnd(width)}  ${right}`);
  return `usage: ${usage}\n\n${description}\n\noptions:\n${lines.join("\n")}\n`;
}
