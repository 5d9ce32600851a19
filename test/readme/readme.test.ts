/**
 * The README's promises, checked: the two quick-start commands exist as the scripts they name, and
 * so does the demo it points to; the testbed paragraph quotes what its recorded run's verdict says; the library example runs (examples/library.ts, the file the README
 * quotes); the `explain` lines print what the rule says; and "Running a swarm node" runs as shown,
 * on the shipped examples/*.yaml. (The full `npm start` run is the testbed's own test: test/testbed;
 * the demo's is test/cli/demo.test.ts.)
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { NodeClient } from "../../src/node/client.js";
import { freePorts } from "../../src/testbed/free-port.js";
import type { ReportView } from "../../src/testbed/report-view.js";
import { verdict } from "../../src/testbed/verdict.js";
import { formatTable } from "../../src/testbed/report-table.js";
import type { Report } from "../../src/testbed/report.js";
import { daemon, tailswarm } from "../cli/dist.js";
import type { Daemon } from "../cli/dist.js";

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

  it("quick start points to the demo, which is a verb and an npm script", () => {
    const quick = /## Quick start([\s\S]*?)\n## /.exec(readme)?.[1] ?? "";
    expect(quick).toContain("`npm run demo` (`npx tailswarm demo` on a Node ≥ 22.15)");
    expect(pkg.scripts.demo).toMatch(/(^|ensure-node\.sh )node dist\/cli\/main\.js demo$/);
  });

  it("the testbed paragraph quotes the recorded run's verdict and numbers, and names the command", () => {
    const para = /\n`npm start` runs `tailswarm testbed`[\s\S]*?\n\n([\s\S]*?)\n\n/.exec(readme)?.[1] ?? "";
    expect(para).toContain("`npx tailswarm testbed --duration 60`");
    const fixture = /test\/testbed\/fixtures\/([a-z0-9-]+\.report\.json)/.exec(para)?.[1];
    expect(fixture, para).toBeDefined();
    const report = JSON.parse(readFileSync(`${root}test/testbed/fixtures/${fixture}`, "utf8")) as ReportView;
    const said = `${verdict(report).text} ${formatTable(report as Report)}`.replace(/\s+/g, " ");
    const quotes = [...para.matchAll(/“([^”]+)”/g)].map((m) => m[1]!.replace(/\s+/g, " "));
    expect(quotes.length).toBeGreaterThan(3);
    for (const q of quotes) expect(said, q).toContain(q);
    const m = report.measured;
    expect(para.replace(/\s+/g, " ")).toContain(
      `p50 of ${m.fanout_p50_ms} ms and p99 of ${m.fanout_p99_ms} ms`,
    );
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

  describe("Running a swarm node, as shown", () => {
    const daemons: Daemon[] = [];
    afterAll(async () => {
      await Promise.all(daemons.map((d) => d.stop()));
    });

    it("runs every command of the section on the shipped examples", async () => {
      const block = /## Running a swarm node[\s\S]*?```sh\n([\s\S]*?)```/.exec(readme)?.[1] ?? "";
      const commands = block
        .split("\n")
        .map((l) => l.replace(/\s+#.*$/, "").trim())
        .filter((l) => l !== "");
      expect(commands.length).toBeGreaterThanOrEqual(5);
      // The README's ports, moved to free ones (other tests run alongside), in the commands and in
      // copies of the example files; everything else as written.
      const [p0, p1, p2] = await freePorts(3);
      const ports: Record<string, number> = {
        "127.0.0.1:7400": p0!,
        "127.0.0.1:7401": p1!,
        "127.0.0.1:7402": p2!,
      };
      const movePorts = (text: string): string =>
        text.replace(/127\.0\.0\.1:740[0-2]\b/g, (a) => `127.0.0.1:${ports[a] ?? a}`);
      const dir = mkdtempSync(join(tmpdir(), "tailswarm-readme-"));
      const files = (text: string): string =>
        text.replace(/examples\/([a-z]+\.yaml)/g, (_m, name: string) => {
          const copy = join(dir, name);
          writeFileSync(copy, movePorts(readFileSync(join(root, "examples", name), "utf8")));
          return copy;
        });
      const coordinator = `127.0.0.1:${p0}`;
      for (const command of commands) {
        expect(command).toMatch(/^npx tailswarm /);
        const args = files(movePorts(command))
          .replace(/^npx tailswarm /, "")
          .match(/'[^']*'|\S+/g)!
          .map((a) => a.replace(/^'(.*)'$/, "$1"));
        const [verb] = args;
        if (verb === "node" || verb === "host") {
          const d = daemon(args);
          daemons.push(d);
          await d.waitForLog((l) => l.msg === (verb === "host" ? "hosting" : "listening"), 60_000);
          if (verb === "node" && args.includes("--config")) await peersUp(coordinator, 2);
          continue;
        }
        const r = await tailswarm(args);
        expect(r.code, `${command}\n${r.stderr}`).toBe(0);
        if (verb === "coordinate")
          expect(r.stdout).toMatch(/^action: "(yes|no)"\nmode: synchronous \(estimate-unknown\)/);
        if (verb === "status")
          expect(r.stdout).toMatch(
            /\n {2}a +127\.0\.0\.1:\d+ +eu +up[\s\S]*\n {2}b +127\.0\.0\.1:\d+ +eu +up/,
          );
        if (verb === "decisions")
          expect(r.stdout).toMatch(
            /^node coordinator: 1 of 1 decisions[\s\S]*because fan-out estimate unknown/,
          );
      }
      for (const d of daemons.splice(0)) expect(await d.stop()).toBe(0);
      rmSync(dir, { recursive: true, force: true });
    }, 180_000);
  });
});

/** Waits until the node at `address` sees `count` peers up. */
async function peersUp(address: string, count: number): Promise<void> {
  const client = new NodeClient(address);
  try {
    for (let i = 0; i < 200; i++) {
      const s = await client.status(1_000).catch(() => undefined);
      if (s !== undefined && s.peers.filter((p) => p.up).length >= count) return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${address}: fewer than ${count} peers up after 20 s`);
  } finally {
    client.close();
  }
}
