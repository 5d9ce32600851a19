/**
 * The README's promises, checked: the two quick-start commands exist as the scripts they name, the
 * library example runs (examples/library.ts, the file the README quotes), and the `explain` lines
 * print what the rule says. (The full `npm start` run is the testbed's own test: test/testbed.)
 */
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

const run = promisify(execFile);
const root = new URL("../../", import.meta.url).pathname;
const readme = readFileSync(`${root}README.md`, "utf8");
const pkg = JSON.parse(readFileSync(`${root}package.json`, "utf8")) as { scripts: Record<string, string> };

describe("README", () => {
  it("quick start is two commands whose scripts exist", () => {
    const quick = /## Quick start[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const commands = quick
      .split("\n")
      .map((l) => l.replace(/#.*$/, "").trim())
      .filter((l) => l !== "");
    expect(commands).toEqual(["npm install && npm start", "npm test"]);
    expect(pkg.scripts.start).toMatch(/testbed/);
    expect(pkg.scripts.test).toBeDefined();
    expect(pkg.scripts.prepare).toMatch(/build/); // `npm install` builds dist/, which `npm start` runs
  });

  it("quotes examples/library.ts as it is", () => {
    const file = readFileSync(`${root}examples/library.ts`, "utf8");
    const quoted = /```ts\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
    const lines = quoted.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("// examples/"));
    for (const line of lines) expect(file).toContain(line);
  });

  it("the library example runs and shows the three modes", async () => {
    const { stdout } = await run("npx", ["tsx", "examples/library.ts"], { cwd: root, timeout: 120_000 });
    expect(stdout).toMatch(/budget 1000 ms.*-> speculate/);
    expect(stdout).toMatch(/budget 100 ms.*-> synchronous/);
    expect(stdout).toMatch(/budget 10 ms.*-> degrade/);
  });

  it("the explain lines print the rule's verdict", async () => {
    const lines = readme.split("\n").filter((l) => l.startsWith("$ npx tailswarm explain"));
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) {
      const args = line.replace("$ npx tailswarm ", "").split(/\s+/);
      const { stdout } = await run("node", ["dist/cli/main.js", ...args], { cwd: root, timeout: 60_000 });
      if (args.includes("--json")) {
        expect(JSON.parse(stdout)).toMatchObject({ mode: "synchronous" });
      } else {
        expect(stdout).toMatch(/synchronous/);
      }
    }
  });
});
