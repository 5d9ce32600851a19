/**
 * Self time per fan-out, by frame, in a `.cpuprofile` (e.g. one the window profiler wrote with
 * TELEMETRY_BENCH_PROFILE_DIR): what each function cost on its own, divided by the fan-outs of the
 * profiled window, with idle time left out. Optionally only the frames whose "function url" matches a
 * pattern, and their sum.
 *
 *   npx tsx bench/profile-summary.ts <file.cpuprofile> <fan-outs> [pattern] [--top N]
 *   npx tsx bench/profile-summary.ts d/coordinator-on.cpuprofile 5352 'telemetry|opentelemetry'
 *
 * Self time, not inclusive: a frame that wraps a call (a context manager's `with`) is charged only
 * for its own work, not for the call it runs. Inlined functions are charged to the frame they were
 * inlined into, so single frames move between runs; sums over a pattern are steadier.
 *
 *   npx tsx bench/profile-summary.ts --rounds <dir>
 *
 * The per-round profiles of an interleaved telemetry-grpc run (TELEMETRY_BENCH_PROFILE_DIR without
 * _ONLY): each variant's µs per fan-out by category (profile-categories.ts), its rounds pooled, beside
 * "off"'s and as the difference.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { categoryTotals } from "./profile-categories.js";
import type { CallFrame, Profile } from "./profile-categories.js";
import { pathToFileURL } from "node:url";

export interface Summary {
  /** µs per fan-out not idle (including GC and "(program)"). */
  readonly busy: number;
  /** µs per fan-out in "(garbage collector)". */
  readonly gc: number;
  /** µs per fan-out in the frames that match the pattern (all frames without one). */
  readonly matching: number;
  /** Frames, costliest first: label and µs per fan-out. */
  readonly frames: readonly (readonly [string, number])[];
}

/** "name url:line", with paths shortened to the package or the repository file. */
function label(cf: CallFrame): string {
  const url = cf.url.replace(/.*node_modules\//, "").replace(/^file:\/\/.*?\/(src|bench|test)\//, "$1/");
  return `${cf.functionName === "" ? "(anonymous)" : cf.functionName} ${url}:${cf.lineNumber + 1}`;
}

export function summarize(profile: Profile, fanouts: number, pattern?: RegExp): Summary {
  if (!(fanouts > 0)) throw new RangeError(`fan-outs: expected a positive number, got ${fanouts}`);
  const frameOf = new Map(profile.nodes.map((n) => [n.id, n.callFrame]));
  const self = new Map<string, number>();
  let busy = 0;
  let gc = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    const cf = frameOf.get(profile.samples[i]!);
    const dt = profile.timeDeltas[i] ?? 0;
    if (cf === undefined || cf.functionName === "(idle)") continue;
    busy += dt;
    if (cf.functionName === "(garbage collector)") gc += dt;
    const key = label(cf);
    self.set(key, (self.get(key) ?? 0) + dt);
  }
  const frames = [...self.entries()]
    .filter(([k]) => pattern === undefined || pattern.test(k))
    .map(([k, t]) => [k, t / fanouts] as const)
    .sort((a, b) => b[1] - a[1]);
  const matching = frames.reduce((sum, [, t]) => sum + t, 0);
  return { busy: busy / fanouts, gc: gc / fanouts, matching, frames };
}

/** `--rounds <dir>`: each variant's categories against "off"'s, pooled over its rounds. */
function rounds(dir: string): void {
  const fanouts = JSON.parse(readFileSync(join(dir, "fanouts.json"), "utf8")) as Record<string, number>;
  const pooled = new Map<string, { n: number; us: Map<string, number> }>();
  for (const file of readdirSync(dir)) {
    const m = /^coordinator-(\w+)-\d+\.cpuprofile$/.exec(file);
    const n = fanouts[file.replace(/\.cpuprofile$/, "")];
    if (m === null || n === undefined) continue;
    const p = pooled.get(m[1]!) ?? { n: 0, us: new Map<string, number>() };
    for (const [k, us] of categoryTotals(JSON.parse(readFileSync(join(dir, file), "utf8")) as Profile))
      p.us.set(k, (p.us.get(k) ?? 0) + us);
    p.n += n;
    pooled.set(m[1]!, p);
  }
  const off = pooled.get("off");
  if (off === undefined) throw new Error(`${dir}: no profiles of "off" rounds`);
  const per = (p: { n: number; us: Map<string, number> }, k: string): number => (p.us.get(k) ?? 0) / p.n;
  for (const [name, p] of pooled) {
    if (name === "off") continue;
    console.log(
      `\n${name} (${p.n} fan-outs) against off (${off.n}), µs per fan-out: off, ${name}, difference`,
    );
    const keys = [...new Set([...off.us.keys(), ...p.us.keys()])];
    const rows = keys
      .map((k) => [k, per(off, k), per(p, k)] as const)
      .sort((a, b) => Math.abs(b[2] - b[1]) - Math.abs(a[2] - a[1]));
    for (const [k, a, b] of rows) {
      if (Math.max(a, b) < 0.5) continue;
      console.log(
        `${a.toFixed(1).padStart(8)} ${b.toFixed(1).padStart(8)} ${(b - a).toFixed(1).padStart(7)}  ${k}`,
      );
    }
  }
}

function main(argv: readonly string[]): void {
  if (argv[0] === "--rounds" && argv[1] !== undefined) return rounds(argv[1]);
  const topAt = argv.indexOf("--top");
  const top = topAt >= 0 ? Number(argv[topAt + 1]) : 25;
  const args = topAt >= 0 ? [...argv.slice(0, topAt), ...argv.slice(topAt + 2)] : [...argv];
  const [file, n, pattern] = args;
  if (file === undefined || n === undefined) {
    console.error("usage: npx tsx bench/profile-summary.ts <file.cpuprofile> <fan-outs> [pattern] [--top N]");
    process.exit(2);
  }
  const s = summarize(
    JSON.parse(readFileSync(file, "utf8")) as Profile,
    Number(n),
    pattern === undefined ? undefined : new RegExp(pattern),
  );
  console.log(
    `busy ${s.busy.toFixed(1)} µs/fan-out, garbage collector ${s.gc.toFixed(1)}` +
      (pattern === undefined ? "" : `, frames matching /${pattern}/ ${s.matching.toFixed(1)}`),
  );
  for (const [k, t] of s.frames.slice(0, top)) console.log(`${t.toFixed(2).padStart(8)}  ${k}`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) main(process.argv.slice(2));
