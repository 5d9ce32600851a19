/**
 * `npm run bench`: runs every bench in the list below, in order, each printing its figures and merging them
 * into bench/results/latest.json (see report.ts). `npm run bench -- estimate` runs only the benches whose
 * name contains one of the arguments; an argument that is a bench's whole name runs just that one.
 *
 * Each bench runs in its own process (`tsx bench/run.ts --one <name>`), one after the other: a bench's
 * global state (an OpenTelemetry context manager, warm JIT, heap) does not leak into the next one's
 * figures, a bench that throws or crashes is reported without stopping the others, and a bench that does
 * not end (a child process or a handle left open) is reported and killed. The exit code is 1 when any
 * bench failed; a summary names each bench's result.
 *
 * To add a bench: create `bench/<area>.bench.ts` exporting `run(): Promise<void> | void` that records its
 * figures with `recordFigures` and stops everything it started, and add a line to BENCHES.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

interface BenchModule {
  run(): Promise<void> | void;
}

const BENCHES: readonly (readonly [string, () => Promise<BenchModule>])[] = [
  ["estimate", () => import("./estimate.bench.js")],
  ["decision-path", () => import("./decision-path.bench.js")],
  ["reply-reserve", () => import("./reply-reserve.bench.js")],
  ["routing", () => import("./routing.bench.js")],
  ["telemetry", () => import("./telemetry.bench.js")],
  ["telemetry-grpc", () => import("./telemetry-grpc.bench.js")],
  ["trace-header", () => import("./trace-header.bench.js")],
  ["mesh", () => import("./mesh.bench.js")],
  ["footprint", () => import("./footprint.bench.js")],
  ["overload", () => import("./overload.bench.js")],
  ["scale", () => import("./scale.bench.js")],
];

/** Longest a bench may run, ms (`BENCH_TIMEOUT_MS`). */
const TIMEOUT_MS = Number(process.env.BENCH_TIMEOUT_MS ?? 20 * 60_000);
/** After `run()` returns, how long the bench process may take to exit by itself, ms. */
const EXIT_GRACE_MS = 10_000;
/** Exit code of a bench process that did not end by itself after `run()` returned. */
const LEFT_RUNNING = 3;

/** In the bench's own process: runs it; exits non-zero if it throws or leaves work behind. */
async function runOne(name: string): Promise<void> {
  const entry = BENCHES.find(([n]) => n === name);
  if (entry === undefined) throw new Error(`unknown bench ${JSON.stringify(name)}`);
  const mod = await entry[1]();
  await mod.run();
  setTimeout(() => {
    console.error(
      `bench ${name}: still running ${EXIT_GRACE_MS / 1000} s after run() returned; open: ${process
        .getActiveResourcesInfo()
        .join(", ")}`,
    );
    process.exit(LEFT_RUNNING);
  }, EXIT_GRACE_MS).unref();
}

interface Result {
  readonly name: string;
  readonly ok: boolean;
  readonly detail: string;
  readonly seconds: number;
}

function spawnOne(name: string): Promise<Result> {
  const started = performance.now();
  const child = spawn(process.execPath, ["--import", "tsx", fileURLToPath(import.meta.url), "--one", name], {
    stdio: "inherit",
  });
  return new Promise((resolve) => {
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill("SIGTERM");
      setTimeout(() => child.kill("SIGKILL"), 5_000).unref();
    }, TIMEOUT_MS);
    const done = (ok: boolean, detail: string): void => {
      clearTimeout(timer);
      resolve({ name, ok, detail, seconds: (performance.now() - started) / 1000 });
    };
    child.on("error", (err) => done(false, `could not start: ${err.message}`));
    child.on("exit", (code, signal) => {
      if (timedOut) done(false, `killed after the ${TIMEOUT_MS / 1000} s timeout`);
      else if (code === 0) done(true, "ok");
      else if (code === LEFT_RUNNING)
        done(false, "run() returned but the process did not exit (open handles)");
      else done(false, signal === null ? `exit code ${code}` : `killed by ${signal}`);
    });
  });
}

async function main(args: readonly string[]): Promise<number> {
  // An argument that names a bench exactly selects that one (`telemetry` is not also `telemetry-grpc`);
  // any other selects every bench whose name contains it.
  const exact = (f: string): boolean => BENCHES.some(([n]) => n === f);
  const selected = BENCHES.filter(
    ([name]) => args.length === 0 || args.some((f) => (exact(f) ? name === f : name.includes(f))),
  );
  if (selected.length === 0) {
    console.error(`no bench matches ${args.join(", ")}; known: ${BENCHES.map(([n]) => n).join(", ")}`);
    return 2;
  }
  const results: Result[] = [];
  for (const [name] of selected) {
    console.log(`\n# bench ${name}`);
    const r = await spawnOne(name);
    results.push(r);
    console.log(`# bench ${name} ${r.ok ? "done" : `FAILED (${r.detail})`} in ${r.seconds.toFixed(1)} s`);
  }
  console.log("\n# benches");
  for (const r of results) {
    console.log(
      `  ${r.name.padEnd(16)} ${r.ok ? "ok    " : "FAILED"} ${r.seconds.toFixed(1).padStart(6)} s  ${r.ok ? "" : r.detail}`,
    );
  }
  const failed = results.filter((r) => !r.ok);
  if (failed.length > 0)
    console.error(
      `\n${failed.length} of ${results.length} benches failed: ${failed.map((r) => r.name).join(", ")}`,
    );
  return failed.length > 0 ? 1 : 0;
}

const argv = process.argv.slice(2);
if (argv[0] === "--one") {
  try {
    await runOne(argv[1] ?? "");
  } catch (err) {
    console.error(`bench ${argv[1]}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    process.exitCode = 1;
  }
} else {
  process.exitCode = await main(argv);
}
