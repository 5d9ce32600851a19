/**
 * `npm run bench`: runs every bench in the list below, in order, each printing its figures and merging them
 * into bench/results/latest.json (see report.ts). `npm run bench -- estimate` runs only the benches whose
 * name contains one of the arguments.
 *
 * To add a bench: create `bench/<area>.bench.ts` exporting `run(): Promise<void> | void`, and add a line to
 * BENCHES.
 */
interface BenchModule {
  run(): Promise<void> | void;
}

const BENCHES: readonly (readonly [string, () => Promise<BenchModule>])[] = [
  ["estimate", () => import("./estimate.bench.js")],
  ["telemetry", () => import("./telemetry.bench.js")],
  ["telemetry-grpc", () => import("./telemetry-grpc.bench.js")],
];

const filters = process.argv.slice(2);
const selected = BENCHES.filter(([name]) => filters.length === 0 || filters.some((f) => name.includes(f)));
if (selected.length === 0) {
  console.error(`no bench matches ${filters.join(", ")}; known: ${BENCHES.map(([n]) => n).join(", ")}`);
  process.exitCode = 2;
}
for (const [name, load] of selected) {
  const started = performance.now();
  console.log(`\n# bench ${name}`);
  const mod = await load();
  await mod.run();
  console.log(`# bench ${name} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
}
