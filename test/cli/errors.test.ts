/**
 * Every verb's errors in one format on stderr — `tailswarm <verb>: <message>`, then `hint: ...` where
 * there is something to do — with "did you mean" for a mistyped verb, flag or value, and `--version`
 * answered everywhere from package.json.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../node/helpers/spawn-node.js";
import { ownLines, tailswarm } from "./dist.js";

const version = (JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }).version;

describe("one error format", () => {
  it("a mistyped verb: did you mean, the verbs, exit 2", async () => {
    const r = await tailswarm(["stauts", "127.0.0.1:7400"]);
    expect(r.code).toBe(2);
    expect(ownLines(r.stderr)).toEqual([
      "tailswarm: unknown verb 'stauts' (did you mean status?)",
      expect.stringMatching(/^hint: the verbs are demo, testbed, node, host, status, coordinate, decisions,/),
    ]);
  });

  it.each([
    ["status", ["status", "127.0.0.1:1", "--jsn"], "unknown flag '--jsn' (did you mean --json?)"],
    [
      "coordinate",
      ["coordinate", "127.0.0.1:1", "--task", "vote", "--deadline"],
      "unknown flag '--deadline' (did you mean --deadline-ms?)",
    ],
    ["decisions", ["decisions", "127.0.0.1:1", "--lst", "3"], "unknown flag '--lst' (did you mean --last?)"],
    ["explain", ["explain", "--budget", "90"], "unknown flag '--budget' (did you mean --budget-ms?)"],
    ["node", ["node", "--listn", "127.0.0.1:0"], "unknown flag '--listn' (did you mean --listen?)"],
    ["host", ["host", "--conifg", "a.yaml"], "unknown flag '--conifg' (did you mean --config?)"],
    ["sim", ["sim", "--workload", "mix"], "expected one of mixed, separation, all (did you mean mixed?)"],
    [
      "testbed",
      ["testbed", "--processes", "per-nod"],
      "expected one of grouped, per-node (did you mean per-node?)",
    ],
    ["config", ["config", "schmea"], "unknown subcommand 'schmea' (did you mean schema?)"],
    ["demo", ["demo", "--jsn"], "unknown flag '--jsn' (did you mean --json?)"],
  ])("%s: a usage error is one line naming it, one hint line, exit 2", async (verb, args, message) => {
    const r = await tailswarm(args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    const lines = ownLines(r.stderr);
    expect(lines).toHaveLength(2);
    expect(lines[0]).toMatch(new RegExp(`^tailswarm ${verb}: `));
    expect(lines[0]).toContain(message);
    expect(lines[1]).toMatch(/^hint: /);
  });

  it("--policy that is not one: exit 2 from the CLI, before any call, with the nearest name", async () => {
    // Nothing listens on port 1: a call would fail with exit 1, so exit 2 proves the CLI refused it.
    const fast = await tailswarm([
      "coordinate",
      "127.0.0.1:1",
      "--task",
      "vote",
      "--deadline-ms",
      "200",
      "--policy",
      "fast",
    ]);
    expect(fast.code).toBe(2);
    expect(ownLines(fast.stderr)[0]).toBe(
      'tailswarm coordinate: --policy: got "fast", expected one of p99-boundary, naive-p50, always-sync, never',
    );
    const p99 = await tailswarm([
      "coordinate",
      "127.0.0.1:1",
      "--task",
      "vote",
      "--deadline-ms",
      "200",
      "--policy",
      "p99",
    ]);
    expect(p99.code).toBe(2);
    expect(p99.stderr).toContain("(did you mean p99-boundary?)");
    const decision = await tailswarm([
      "coordinate",
      "127.0.0.1:1",
      "--task",
      "vote",
      "--deadline-ms",
      "200",
      "--decision",
      "argmx",
    ]);
    expect(decision.code).toBe(2);
    expect(decision.stderr).toContain("(did you mean argmax?)");
  });

  it("explain documents exit code 3 in its help and exits 3 on a violation, in the same format", async () => {
    const help = await tailswarm(["explain", "--help"]);
    expect(help.stdout).toContain("3 SpeculationBudgetViolation");
    const r = await tailswarm([
      "explain",
      "--budget-ms",
      "0",
      "--p50-ms",
      "1",
      "--p99-ms",
      "2",
      "--abandon-cost-ms",
      "0",
    ]);
    expect(r.code).toBe(3);
    expect(ownLines(r.stderr)).toEqual([
      expect.stringMatching(/^tailswarm explain: SPECULATION_BUDGET_VIOLATION: negative or zero budget/),
    ]);
    const docs = readFileSync(join(ROOT, "docs/configuration.md"), "utf8");
    expect(docs).toMatch(/\| 3 \| `explain`: /);
  });
});

describe("--version", () => {
  it.each([
    [["--version"]],
    [["-V"]],
    [["status", "--version"]],
    [["coordinate", "--version"]],
    [["decisions", "--version"]],
    [["node", "--version"]],
    [["host", "--version"]],
    [["explain", "--version"]],
    [["sim", "--version"]],
    [["testbed", "--version"]],
    [["config", "--version"]],
    [["demo", "--version"]],
  ])("tailswarm %j prints package.json's version", async (args) => {
    const r = await tailswarm(args);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`tailswarm ${version}\n`);
  });

  it("every verb's help lists it", async () => {
    for (const verb of [
      "status",
      "coordinate",
      "decisions",
      "explain",
      "sim",
      "testbed",
      "host",
      "node",
      "demo",
      "config",
    ]) {
      expect((await tailswarm([verb, "--help"])).stdout).toContain("--version");
    }
  });
});
