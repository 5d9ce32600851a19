import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { numberFlag, parseFlags, UsageError } from "../../src/cli/args.js";
import { run } from "../../src/cli/commands/explain.js";
import { formatReasonTable } from "../../src/policy/describe.js";

const root = fileURLToPath(new URL("../..", import.meta.url));

/** Run the verb in-process, capturing what it writes. */
async function explain(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const out = vi.spyOn(process.stdout, "write").mockImplementation((chunk: string | Uint8Array) => {
    stdout += String(chunk);
    return true;
  });
  const err = vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
  try {
    const code = await run(argv);
    return { code, stdout, stderr };
  } finally {
    out.mockRestore();
    err.mockRestore();
  }
}

const seed = ["--p50-ms", "22", "--p99-ms", "340", "--abandon-cost-ms", "5"];

afterEach(() => {
  vi.restoreAllMocks();
});

describe("tailswarm explain (in process)", () => {
  it("prints exactly one JSON object with --json", async () => {
    const r = await explain("--budget-ms", "400", ...seed, "--json");
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.trim().split("\n")).toHaveLength(1);
    expect(JSON.parse(r.stdout)).toMatchObject({
      mode: "speculate",
      reason: "budget-exceeds-p99-plus-abandon-cost",
      budgetMs: 400,
      p50Ms: 22,
      p99Ms: 340,
      abandonCostMs: 5,
      relevant: true,
    });
  });

  it.each([
    ["345", "synchronous", "budget-between-p50-and-p99-plus-abandon-cost"], // == p99 + abandon: not speculate
    ["90", "synchronous", "budget-between-p50-and-p99-plus-abandon-cost"],
    ["22", "degrade", "budget-at-or-below-p50"], // == p50: degrade
  ])("budget %s ms → %s", async (budget, mode, reason) => {
    const r = await explain("--budget-ms", budget, ...seed, "--json");
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ mode, reason });
  });

  it("honours --not-relevant and --relevant", async () => {
    const r = await explain("--budget-ms", "400", ...seed, "--not-relevant", "--json");
    expect(JSON.parse(r.stdout)).toMatchObject({
      mode: "synchronous",
      reason: "not-decision-relevant",
      relevant: false,
    });
    const s = await explain("--budget-ms", "400", ...seed, "--relevant", "--json");
    expect(JSON.parse(s.stdout)).toMatchObject({ mode: "speculate" });
  });

  it("prints mode, reason and the deciding inequality for people", async () => {
    const r = await explain("--budget-ms", "90", ...seed);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("mode:    synchronous");
    expect(r.stdout).toContain("reason:  budget-between-p50-and-p99-plus-abandon-cost");
    expect(r.stdout).toContain("p50 22 ms < budget 90 ms <= p99 340 ms + abandon cost 5 ms = 345 ms");
  });

  it.each([
    [["--budget-ms", "0", ...seed], /negative or zero budget \(budgetMs = 0 ms/],
    [["--budget-ms", "-5", ...seed], /budgetMs = -5 ms/],
    [
      ["--budget-ms", "90", "--p50-ms", "400", "--p99-ms", "340", "--abandon-cost-ms", "0"],
      /p99 \(340 ms\) < p50 \(400 ms\)/,
    ],
  ])("exits 3 on a violation, code and message on stderr: %j", async (argv, message) => {
    const r = await explain(...argv, "--json");
    expect(r.code).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("SPECULATION_BUDGET_VIOLATION");
    expect(r.stderr).toMatch(message);
  });

  it.each([
    [["--p50-ms", "22", "--p99-ms", "340", "--abandon-cost-ms", "5"], "missing required flag --budget-ms"],
    [["--budget-ms", "90", "--p50-ms", "22", "--p99-ms", "340"], "missing required flag --abandon-cost-ms"],
    [["--budget-ms", "fast", ...seed], '--budget-ms: got "fast", expected a finite number'],
    [["--budget-ms", "Infinity", ...seed], '--budget-ms: got "Infinity", expected a finite number'],
    [
      ["--budget-ms", "90", "--p50-ms", "-1", "--p99-ms", "340", "--abandon-cost-ms", "5"],
      "--p50-ms: got -1, expected a number >= 0",
    ],
    [["--budget-ms", ...seed], "flag --budget-ms needs a value"],
    [["--budget-ms", "90", ...seed, "--bogus"], "unknown flag '--bogus'"],
    [["--budget-ms", "90", ...seed, "--json=yes"], '--json: got "yes", expected no value'],
    [
      ["--budget-ms", "90", ...seed, "--relevant", "--not-relevant"],
      "--relevant and --not-relevant exclude each other",
    ],
    [["--budget-ms", "90", "--budget-ms", "91", ...seed], "flag --budget-ms given more than once"],
    [["--budget-ms", "90", ...seed, "extra"], "unexpected argument 'extra'"],
  ])("exits 2 on a usage error naming the flag: %j", async (argv, message) => {
    const r = await explain(...argv);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(message);
  });

  it("prints the table of every reason with --reasons", async () => {
    const r = await explain("--reasons");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(formatReasonTable());
    expect(r.stdout).toContain("| `budget > p99 + abandon_cost`");
  });

  it("prints help on --help and -h", async () => {
    for (const flag of ["--help", "-h"]) {
      const r = await explain(flag);
      expect(r.code).toBe(0);
      expect(r.stdout).toContain("usage: tailswarm explain --budget-ms B");
      expect(r.stdout).toContain("--abandon-cost-ms MS");
    }
  });
});

describe("parseFlags", () => {
  const spec = {
    n: { type: "string", description: "a number" },
    tag: { type: "string", multiple: true, description: "tags" },
  } as const;

  it("accepts negative numbers and inline values, collects repeated flags", () => {
    const { values } = parseFlags(["--n", "-5", "--tag=a", "--tag", "b"], spec);
    expect(numberFlag(values, "n")).toBe(-5);
    expect(values.tag).toEqual(["a", "b"]);
    expect(numberFlag({}, "n")).toBeUndefined();
  });

  it("throws UsageError, a TailswarmError with code INVALID_ARGUMENT", () => {
    try {
      parseFlags(["--nope"], spec);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(UsageError);
      expect((err as UsageError).code).toBe("INVALID_ARGUMENT");
    }
    expect(() => numberFlag({ n: "0x10" }, "n")).toThrow('--n: got "0x10", expected a finite number');
  });
});

describe("tailswarm explain (spawned)", () => {
  const cli = (...argv: string[]) =>
    spawnSync(process.execPath, ["--import", "tsx", "src/cli/main.ts", "explain", ...argv], {
      cwd: root,
      encoding: "utf8",
      timeout: 60_000,
    });

  it("prints one JSON object on stdout and exits 0", () => {
    const r = cli("--budget-ms", "90", ...seed, "--json");
    expect(r.status).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      mode: "synchronous",
      reason: "budget-between-p50-and-p99-plus-abandon-cost",
    });
  });

  it("exits 3 on a violation with the code and message on stderr", () => {
    const r = cli("--budget-ms", "0", ...seed, "--json");
    expect(r.status).toBe(3);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/SPECULATION_BUDGET_VIOLATION: negative or zero budget/);
  });

  it("exits 2 naming a missing flag", () => {
    const r = cli("--budget-ms", "90");
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("--p50-ms");
  });
});
