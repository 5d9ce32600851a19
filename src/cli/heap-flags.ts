/**
 * The V8 heap flags `tailswarm node` runs with. V8 sizes its heap when the process starts, so the
 * flags cannot be set from inside the node: when one is missing, the process replaces itself
 * (`process.execve`: same pid, same stdio, same environment) with one started with it. Under load a
 * coordinator's calls in flight outlive young-generation collections and are promoted, and with V8's
 * defaults the old generation grows far past what is live before a full collection; a smaller young
 * generation and full collections at 1.25× the live heap lower the node's RSS under a burst
 * (docs/security.md, "Overload", has the figures and what they cost in CPU).
 *
 * `TAILSWARM_V8_FLAGS` replaces the list (empty: V8's defaults). A flag already given to node, on its
 * command line or in NODE_OPTIONS, is left as given. Where `process.execve` is not available
 * (Windows) the node runs without the missing flags and says so on stderr.
 */
import { UsageError } from "./args.js";

export const DEFAULT_V8_FLAGS = "--max-semi-space-size=4 --heap-growing-percent=25";

/**
 * V8's heap and garbage-collector flags only: any other node option (`--eval`, `--require`, `--version`)
 * would make the restarted process run something else than the node.
 */
const FLAG =
  /^--(no-)?(max-semi-space-size|min-semi-space-size|max-old-space-size|heap-[a-z0-9_-]+|gc-[a-z0-9_-]+|semi-space-[a-z0-9_-]+|scavenger-[a-z0-9_-]+|optimize-for-size|concurrent-marking|parallel-scavenge|single-threaded-gc)(=[0-9.]+)?$/;

/** Set in the restarted process's environment: a flag node did not take leads to one restart, not a loop. */
const RESTARTED = "TAILSWARM_V8_RESTARTED";

/** A flag's name, `-` and `_` alike (V8 takes either). */
const nameOf = (flag: string): string => flag.split("=")[0]!.replaceAll("_", "-");

/** The flags of `raw` (TAILSWARM_V8_FLAGS or the default), each checked. */
export function parseV8Flags(raw: string): string[] {
  const flags = raw.split(/\s+/).filter((f) => f !== "");
  for (const f of flags) {
    if (!FLAG.test(f)) {
      throw new UsageError(
        `TAILSWARM_V8_FLAGS: got ${JSON.stringify(f.slice(0, 80))} (from env), expected V8 flags such as ${DEFAULT_V8_FLAGS}`,
      );
    }
  }
  return flags;
}

/** The flags of `wanted` that neither node's own flags (`execArgv`) nor NODE_OPTIONS already set. */
export function missingV8Flags(
  wanted: readonly string[],
  execArgv: readonly string[],
  nodeOptions: string | undefined,
): string[] {
  const given = new Set(
    [...execArgv, ...(nodeOptions ?? "").split(/\s+/)].filter((a) => a.startsWith("--")).map(nameOf),
  );
  return wanted.filter((f) => !given.has(nameOf(f)));
}

/**
 * Restarts this process with the heap flags it lacks; returns when it has them all (or cannot
 * restart). Call it before anything else runs: nothing of this process survives the restart.
 */
export function ensureV8Flags(): void {
  // read and cleared at once: not a node setting, and not for the node's own children
  const restarted = process.env[RESTARTED] !== undefined;
  delete process.env[RESTARTED];
  const missing = missingV8Flags(
    parseV8Flags(process.env.TAILSWARM_V8_FLAGS ?? DEFAULT_V8_FLAGS),
    process.execArgv,
    process.env.NODE_OPTIONS,
  );
  if (missing.length === 0) return;
  if (restarted) {
    process.stderr.write(`tailswarm: node did not take ${missing.join(" ")}; running without them\n`);
    return;
  }
  if (typeof process.execve !== "function") {
    process.stderr.write(
      `tailswarm: running without ${missing.join(" ")}: this platform cannot restart node with them; pass them to node to bound memory under load\n`,
    );
    return;
  }
  process.execve(
    process.execPath,
    [process.execPath, ...missing, ...process.execArgv, ...process.argv.slice(1)],
    { ...process.env, [RESTARTED]: "1" },
  );
}
