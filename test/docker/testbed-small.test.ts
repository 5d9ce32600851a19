/**
 * The containerised testbed end to end, the CI shape: `docker/testbed.sh --small --kill-after S`
 * generates the `smoke` swarm from its scenario file (one container per peer and coordinator),
 * starts it, drives it with `tailswarm testbed --attach` from a container on `wan`, SIGKILLs one
 * peer behind the gateway mid-run, and tears everything down. Asserts on report.json what happened:
 * containers found each other by DNS (every peer answered branches from the coordinators' containers),
 * the killed peer was marked down by every coordinator, the fan-outs after it was lost still resolved
 * (the coordinator with room in its budget answered without it, its branches to the dead peer
 * abandoned or failed, never committed), every call ended by the caller's deadline; and that nothing
 * with the project label is left. Timing is never asserted: the machine is shared and slow.
 *
 * Skipped unless TAILSWARM_DOCKER_TESTS=1. TAILSWARM_TESTBED_NO_BUILD=1 uses $TAILSWARM_IMAGE as it
 * is (default tailswarm:dev) instead of building it.
 */
import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { expectNothingLeft } from "./helpers/compose-project.js";

const run = promisify(execFile);
const enabled = process.env.TAILSWARM_DOCKER_TESTS === "1";
const repo = fileURLToPath(new URL("../..", import.meta.url));

interface FanoutsAfter {
  calls: number;
  answered: number;
  within_budget: number;
  deadline_misses: number;
  failed: number;
  branches_to_lost_peer: Record<string, number>;
  max_overrun_ms: number | null;
}

interface SmallReport {
  scenario: string;
  policies: Record<string, { fanouts: number }>;
  attached: {
    coordinators: Record<string, string>;
    peers_expected: number;
    peers_answering: number;
    branches: { answered: number; total: number };
    membership_events: { peer: string; coordinator: string; change: string }[];
    lost_peers: {
      peer: string;
      marked_down_by: string[];
      fanouts_after: Record<string, FanoutsAfter>;
    }[];
  };
}

describe.skipIf(!enabled)("docker/testbed.sh --small", () => {
  let out = "";
  afterAll(async () => {
    if (out !== "") await rm(out, { recursive: true, force: true });
  });

  it("fan-outs cross containers, a killed peer is marked down, the report says so, nothing is left", async () => {
    out = await mkdtemp(join(tmpdir(), "tailswarm-docker-small-"));
    const args = ["docker/testbed.sh", "--small", "--duration", "20", "--kill-after", "10", "--out", out];
    if (process.env.TAILSWARM_TESTBED_NO_BUILD === "1") args.push("--no-build");
    const { stderr } = await run("bash", args, { cwd: repo, maxBuffer: 64 << 20, timeout: 900_000 }).catch(
      (error: { stderr?: string; message: string }) => {
        throw new Error(`docker/testbed.sh failed: ${error.message}\n${error.stderr ?? ""}`);
      },
    );
    const project = /tearing down (tailswarm-tb-\d+)/.exec(stderr)?.[1];
    expect(project, stderr).toBeDefined();

    const fault = JSON.parse(await readFile(join(out, "faults.json"), "utf8")) as { peer: string };
    const report = JSON.parse(await readFile(join(out, "report.json"), "utf8")) as SmallReport;
    const a = report.attached;
    expect(report.scenario).toBe("smoke");
    for (const p of Object.values(report.policies)) expect(p.fanouts).toBeGreaterThan(0);
    // Containers found each other by service DNS: every peer answered some coordinator's branch.
    expect(a.peers_answering).toBe(a.peers_expected);
    expect(a.branches.answered).toBeGreaterThan(0);

    // The killed peer was marked down (failed probes or gone from DNS) by every coordinator.
    const lost = a.lost_peers.find((l) => l.peer === fault.peer);
    expect(lost, JSON.stringify(a.membership_events)).toBeDefined();
    expect(lost!.marked_down_by.sort()).toEqual(Object.keys(a.coordinators).sort());

    // After it stopped answering, the fan-outs still resolved: every call ended by the caller's
    // deadline (plus scheduling slack), the coordinator with the largest budget still answered, and
    // no branch to the dead peer was committed.
    const after = Object.entries(lost!.fanouts_after);
    for (const [, f] of after) {
      expect(f.calls).toBeGreaterThan(0);
      expect(f.within_budget + f.deadline_misses + f.failed).toBe(f.calls);
      expect(f.branches_to_lost_peer.committed ?? 0).toBe(0);
    }
    const roomiest = Object.entries(a.coordinators)
      .map(([name]) => name)
      .sort((x, y) => Number(/(\d+)ms/.exec(y)?.[1]) - Number(/(\d+)ms/.exec(x)?.[1]))[0]!;
    expect(lost!.fanouts_after[roomiest]!.answered).toBeGreaterThan(0);

    // Nothing with the project label is left.
    await expectNothingLeft(project!);
  }, 900_000);
});
