/**
 * `tailswarm node` runs with its V8 heap flags: the process restarts itself with the ones node was
 * not given (same pid, same stderr, still drains on SIGTERM), TAILSWARM_V8_FLAGS replaces them, a
 * flag given to node is left as given, and a malformed list is a usage error. Needs `npm run build`.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { DEFAULT_V8_FLAGS, missingV8Flags, parseV8Flags } from "../../src/cli/heap-flags.js";
import { NodeClient } from "../../src/node/client.js";
import { daemon, tailswarm } from "./dist.js";

/** The command line a process runs with now (after any restart). */
const cmdline = (pid: number): string[] =>
  readFileSync(`/proc/${pid}/cmdline`, "utf8")
    .split("\0")
    .filter((a) => a !== "");

/** Starts `tailswarm node` with `env`, returns its command line once it listens, then stops it. */
async function nodeCmdline(env: Record<string, string>): Promise<{ argv: string[]; code: number }> {
  const d = daemon(["node", "--listen", "127.0.0.1:0", "--node-id", "heap"], env);
  try {
    const listening = await d.waitForLog((l) => l.msg === "listening", 30_000);
    // answered: the node has left its start-up (it logs "listening" before it handles SIGTERM)
    const client = new NodeClient(String(listening.address));
    await client.status().finally(() => client.close());
    return { argv: cmdline(d.child.pid!), code: await d.stop() };
  } finally {
    await d.stop();
  }
}

describe("V8 heap flags", () => {
  it("parses a list and refuses what is not a flag", () => {
    expect(parseV8Flags(` ${DEFAULT_V8_FLAGS}  `)).toEqual([
      "--max-semi-space-size=4",
      "--heap-growing-percent=25",
    ]);
    expect(parseV8Flags("")).toEqual([]);
    expect(() => parseV8Flags("--max-semi-space-size=4 ;rm")).toThrow(
      /TAILSWARM_V8_FLAGS: got ";rm" \(from env\), expected V8 flags/,
    );
    // node options that would make the restarted process run something else are not heap flags
    for (const other of ["--eval=0", "--require=x", "--version", "--import=y"]) {
      expect(() => parseV8Flags(other)).toThrow(/expected V8 flags/);
    }
    expect(parseV8Flags("--max-old-space-size=512 --no-concurrent-marking")).toHaveLength(2);
  });

  it("leaves a flag node was given, on its command line or in NODE_OPTIONS, in either spelling", () => {
    const wanted = parseV8Flags(DEFAULT_V8_FLAGS);
    expect(missingV8Flags(wanted, [], undefined)).toEqual(wanted);
    expect(missingV8Flags(wanted, ["--max_semi_space_size=16"], undefined)).toEqual([
      "--heap-growing-percent=25",
    ]);
    expect(missingV8Flags(wanted, [], "--max-semi-space-size=8 --heap-growing-percent=50")).toEqual([]);
  });

  it("restarts `tailswarm node` with the flags, in the same process, which still drains on SIGTERM", async () => {
    const { argv, code } = await nodeCmdline({ NODE_OPTIONS: "" });
    expect(argv.slice(1, 3)).toEqual(["--max-semi-space-size=4", "--heap-growing-percent=25"]);
    expect(argv.slice(-5)).toEqual(["node", "--listen", "127.0.0.1:0", "--node-id", "heap"]);
    expect(code).toBe(0);
  });

  it("takes TAILSWARM_V8_FLAGS instead, and none when it is empty", async () => {
    expect((await nodeCmdline({ NODE_OPTIONS: "", TAILSWARM_V8_FLAGS: "" })).argv.slice(1, 2)).toEqual([
      expect.stringMatching(/cli\/main\.js$/),
    ]);
    expect(
      (await nodeCmdline({ NODE_OPTIONS: "--max-semi-space-size=8", TAILSWARM_V8_FLAGS: DEFAULT_V8_FLAGS }))
        .argv[1],
    ).toBe("--heap-growing-percent=25");
  });

  it("refuses a malformed TAILSWARM_V8_FLAGS before starting", async () => {
    const r = await tailswarm(["node", "--listen", "127.0.0.1:0"], {
      env: { TAILSWARM_V8_FLAGS: "--max-semi-space-size=4 $(x)" },
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/TAILSWARM_V8_FLAGS: got "\$\(x\)" \(from env\), expected V8 flags/);
  });
});
