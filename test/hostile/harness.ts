/**
 * What every attack of the hostile-client suite measures around itself, against a node process: an
 * honest client's rate (open loop, Branch echo calls on its own connection from 127.0.0.1) without the
 * attack and during it, the node's peak RSS during it (VmHWM, reset before), and that the node is
 * alive and answers after it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import * as http2 from "node:http2";
import { connect } from "node:net";
import { swarmService } from "../../src/mesh/proto.js";
import { grpcFrame, rawUnary } from "../support/raw-grpc.js";
import type { RawStatus } from "../support/raw-grpc.js";

/** The honest client's calls per second (one every 25 ms), each with a 1 s deadline. */
const HONEST_EVERY_MS = 25;
/** The shortest window an honest rate is measured over, ms: fewer calls would make 95% a coin toss. */
const MIN_WINDOW_MS = 1_500;

const echoFrame = grpcFrame(
  swarmService().Branch.requestSerialize({
    kind: "echo",
    branchId: "honest",
    origin: "honest",
    payload: Buffer.from('"hi"'),
  }),
);

/** An HTTP/2 session to `address` ("host:port"), from `localAddress` when given; errors ignored. */
export function connectFrom(address: string, localAddress?: string): http2.ClientHttp2Session {
  const at = address.lastIndexOf(":");
  const s = http2.connect(`http://${address}`, {
    createConnection: () =>
      connect({ host: address.slice(0, at), port: Number(address.slice(at + 1)), localAddress }),
  });
  s.on("error", () => undefined);
  return s;
}

/** `connectFrom`, resolved once connected. */
export function session(address: string, localAddress?: string): Promise<http2.ClientHttp2Session> {
  const s = connectFrom(address, localAddress);
  return new Promise((resolve, reject) => {
    s.once("connect", () => resolve(s));
    s.once("close", () => reject(new Error(`connection to ${address} closed before it was up`)));
  });
}

export function rss(pid: number, key: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`${key}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(m?.[1]) / 1024;
}

/**
 * Sends the honest client's calls on `s` until `until` settles and MIN_WINDOW_MS passed, then closes
 * it: ok calls per second.
 */
async function honestRate(s: http2.ClientHttp2Session, until: Promise<unknown>): Promise<number> {
  const t0 = Date.now();
  let stopped = false;
  const stop = (): void => void (stopped = true);
  until.then(stop, stop);
  const calls: Promise<RawStatus>[] = [];
  try {
    // Call k is due at t0 + k·HONEST_EVERY_MS; calls this process was too busy to send on time go
    // out at once, so its own lag (the attacker runs in it too) does not lower the rate it offers.
    while (!stopped || Date.now() - t0 < MIN_WINDOW_MS) {
      while (calls.length * HONEST_EVERY_MS <= Date.now() - t0) {
        calls.push(rawUnary(s, swarmService().Branch.path, echoFrame, { timeoutMs: 1_000, giveUpMs: 2_000 }));
      }
      await new Promise((r) => setTimeout(r, HONEST_EVERY_MS));
    }
    const window = (calls.length * HONEST_EVERY_MS) / 1_000;
    const ok = (await Promise.all(calls)).filter((r) => r.code === 0).length;
    return ok / window;
  } finally {
    s.close();
  }
}

/** Runs `run(0 … count-1)` with at most `limit` at once (a connection's stream limit); results in order. */
export async function atMost<T>(count: number, limit: number, run: (i: number) => Promise<T>): Promise<T[]> {
  const out = new Array<T>(count);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const i = next++;
      out[i] = await run(i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return out;
}

export interface Outcome<T> {
  /** What the attack returned. */
  readonly result: T;
  /** Honest ok calls per second without the attack, then during it. */
  readonly baseline: number;
  readonly during: number;
  /** Peak RSS during the attack less RSS before it, MiB. */
  readonly rssGrowthMiB: number;
}

/**
 * Measures the honest rate alone, then runs `attack` with the honest client beside it, the node's peak
 * RSS reset before it.
 */
export async function underAttack<T>(
  node: { address: string; pid: number },
  attack: () => Promise<T>,
): Promise<Outcome<T>> {
  const baseline = await honestRate(await session(node.address), Promise.resolve());
  // connected before the attack starts: an attack may fill every connection the node allows
  const honest = await session(node.address);
  const before = rss(node.pid, "VmRSS");
  writeFileSync(`/proc/${node.pid}/clear_refs`, "5"); // resets VmHWM to the current RSS
  let result!: T;
  const attacking = (async () => {
    result = await attack();
  })();
  const during = await honestRate(honest, attacking);
  await attacking;
  return { result, baseline, during, rssGrowthMiB: rss(node.pid, "VmHWM") - before };
}
