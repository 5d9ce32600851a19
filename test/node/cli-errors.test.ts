import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./helpers/spawn-node.js";
import { scratchDir } from "../support/scratch-dir.js";

const dir = scratchDir("cli");

describe("tailswarm node: bad input exits with the field named", () => {
  it("bad config value → 78 naming field, value and expectation", async () => {
    const file = join(dir(), "bad.yaml");
    writeFileSync(file, "listen: 127.0.0.1:0\nprobe:\n  failureThreshold: 0\n");
    const r = await runCli(["node", "--config", file], { TAILSWARM_REGION: "has space" });
    expect(r.code).toBe(78);
    expect(r.stderr).toContain("probe.failureThreshold: got 0");
    expect(r.stderr).toContain('region: got "has space" (from env TAILSWARM_REGION)');
  });

  it("unknown key → 78; unknown flag → 2", async () => {
    const file = join(dir(), "unknown.json");
    writeFileSync(file, JSON.stringify({ listen: "127.0.0.1:0", peer: ["a:1"] }));
    const r = await runCli(["node", "--config", file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(`peer: got ["a:1"] (from file ${file}), expected a known key`);
    expect(r.stderr).toContain("did you mean peers?");
    const u = await runCli(["node", "--listn", "127.0.0.1:0"]);
    expect(u.code).toBe(2);
    expect(u.stderr).toContain("--listn");
  });

  it("bad routing.primitives table → 78 naming the entry; the flag for it → 78 saying file only", async () => {
    const file = join(dir(), "primitives.yaml");
    writeFileSync(
      file,
      "listen: 127.0.0.1:0\nrouting:\n  policy: mabp\n  primitives:\n    rag/0:\n      noReuse: { work: 0, penalty: 4 }\n",
    );
    const r = await runCli(["node", "--config", file]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain(
      'routing.primitives["rag/0"].noReuse.work: got 0 (from file ' + file + "), expected a number > 0",
    );
    const f = await runCli(["node", "--listen", "127.0.0.1:0", "--routing-primitives", "{}"]);
    expect(f.code).toBe(78);
    expect(f.stderr).toContain('routing.primitives: got "{}" (from flag --routing-primitives)');
    expect(f.stderr).toContain("given in the config file");
  });

  it("unknown handler module → 78 naming the entry and the module", async () => {
    const r = await runCli(["node", "--listen", "127.0.0.1:0", "--handlers", "x=./no/such-handler.mjs"]);
    expect(r.code).toBe(78);
    expect(r.stderr).toContain('handlers[0].use: got "./no/such-handler.mjs", expected a shipped handler');
    expect(r.stderr).toContain("ERR_MODULE_NOT_FOUND");
  });
});
