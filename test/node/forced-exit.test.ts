/**
 * `tailswarm node` forced by a second signal, as a real process (dist/cli/main.js, built by `npm test`):
 * the first SIGTERM/SIGINT starts the drain (NOT_SERVING, the in-flight call keeps running for up to
 * drainGraceMs), a second one ends the process at once with 128 + the signal's number (143/130). The
 * exit must be the daemon's own `exit(143)`, not death by the default action of the signal (which a
 * parent sees as signal SIGTERM, and which a shell also reports as 143), and nothing it started may
 * outlive it: it runs as the leader of its own process group, and the group must be empty after.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GrpcTransport } from "../../src/mesh/grpc-transport.js";
import { NodeClient } from "../../src/node/client.js";
import { cleanEnv, ROOT, watchLogs } from "./helpers/spawn-node.js";
import type { LogLine } from "./helpers/spawn-node.js";
import { scratchDir } from "../support/scratch-dir.js";

const MAIN = join(ROOT, "dist", "cli", "main.js");
/** Far longer than the test: only a forced exit can end the drain in time. */
const DRAIN_GRACE_MS = 120_000;
/** How long a forced exit may take after the second signal (the daemon allows itself 200 ms). */
const PROMPT_MS = 3_000;

const dir = scratchDir("forced-exit");
const config = join(dir(), "node.yaml");
writeFileSync(
  config,
  [
    "handlers:",
    `  - { kind: slow, use: ${JSON.stringify(join(ROOT, "peers/examples/slow-echo.mjs"))} }`,
    "",
  ].join("\n"),
);

interface Exit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** performance.now() when the parent saw the exit. */
  readonly at: number;
}

interface Daemon {
  readonly child: ChildProcess;
  readonly pid: number;
  readonly address: string;
  readonly logs: LogLine[];
  readonly exited: Promise<Exit>;
  waitForLog(pred: (l: LogLine) => boolean, timeoutMs?: number): Promise<LogLine>;
  stderr(): string;
}

const daemons: Daemon[] = [];
afterAll(() => {
  for (const d of daemons) {
    if (d.child.exitCode === null && d.child.signalCode === null) d.child.kill("SIGKILL");
  }
});

/** Starts the daemon as the leader of a new process group and waits for its "listening" line. */
async function startDaemon(nodeId: string): Promise<Daemon> {
  if (!existsSync(MAIN)) throw new Error(`${MAIN} is missing: run 'npm run build' (npm test does)`);
  const child = spawn(
    process.execPath,
    [MAIN, "node", "--config", config, "--node-id", nodeId, "--listen", "127.0.0.1:0"],
    {
      cwd: ROOT,
      env: { ...cleanEnv(), TAILSWARM_DRAIN_GRACE_MS: String(DRAIN_GRACE_MS) },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    },
  );
  child.stdout.resume();
  const exited = new Promise<Exit>((resolve) =>
    child.on("exit", (code, signal) => resolve({ code, signal, at: performance.now() })),
  );
  const { logs, stderr, waitForLog } = watchLogs(
    child,
    exited.then((e) => String(e.code ?? e.signal)),
  );
  const listening = await waitForLog((l) => l.msg === "listening", 60_000);
  const d: Daemon = {
    child,
    pid: child.pid!,
    address: listening.address as string,
    logs,
    exited,
    waitForLog,
    stderr,
  };
  daemons.push(d);
  return d;
}

/** Pids of the live processes in process group `pgid` (Linux /proc; zombies count as gone). */
function processGroup(pgid: number): number[] {
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, "utf8");
    } catch {
      continue; // exited while we looked
    }
    // pid (comm) state ppid pgrp …; comm may hold spaces and parentheses, so split after the last ")".
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(pgrp) === pgid && state !== "Z") pids.push(Number(name));
  }
  return pids;
}

async function until(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  what: string,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe.skipIf(process.platform !== "linux")("tailswarm node: a second signal forces the exit", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGINT", 130],
  ] as const)(
    "%s twice during the drain of a long call: exit %d at once, nothing left running",
    async (signal, expected) => {
      const d = await startDaemon(`forced-${signal.toLowerCase()}`);
      const client = new NodeClient(d.address);
      const transport = new GrpcTransport();
      try {
        // A call that would run for 10 minutes is in flight when the first signal arrives.
        const call = transport.branch(
          d.address,
          {
            fanoutId: "f",
            branchId: `long-${signal}`,
            task: { kind: "slow", payload: { delayMs: 600_000 } },
            origin: "test",
            hop: 0,
            deadline: performance.timeOrigin + performance.now() + 600_000,
          },
          { signal: new AbortController().signal },
        );
        await until(async () => (await client.status()).inFlight === 1, 10_000, "call in flight");

        d.child.kill(signal);
        const draining = await d.waitForLog((l) => l.msg === "draining");
        expect(draining.inFlight).toBe(1);
        expect(await client.health()).toBe("NOT_SERVING");
        expect(processGroup(d.pid)).toEqual([d.pid]); // nothing but the daemon itself

        const second = performance.now();
        d.child.kill(signal);
        const exit = await d.exited;
        expect({ code: exit.code, signal: exit.signal }).toEqual({ code: expected, signal: null });
        expect(exit.at - second).toBeLessThan(PROMPT_MS);
        expect(d.logs.find((l) => l.msg === "second signal: forcing exit")?.signal).toBe(signal);
        expect(d.logs.some((l) => l.msg === "forced stop")).toBe(true);
        // The call was cut off, not answered, and the graceful stop that was still waiting (it may
        // log before the exit) does not claim the work drained.
        expect((await call).kind).not.toBe("answer");
        for (const stopped of d.logs.filter((l) => l.msg === "stopped")) expect(stopped.drained).toBe(false);
        await until(() => processGroup(d.pid).length === 0, 2_000, "process group empty");
      } finally {
        transport.close();
        client.close();
      }
    },
    60_000,
  );
});
