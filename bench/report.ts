/**
 * Bench figures: printed as a table and merged into `bench/results/latest.json` under a section name, so
 * that every bench file adds its own section without overwriting the others'.
 *
 * @example
 * recordFigures("estimate", {
 *   "record one sample": { value: 41, unit: "ns", target: 100 },
 * });
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

export interface Figure {
  readonly value: number;
  readonly unit: string;
  /** The target; `met` is computed against it (lower is better unless `higherIsBetter`). */
  readonly target?: number;
  readonly higherIsBetter?: boolean;
  readonly note?: string;
}

export const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), "results", "latest.json");

interface ResultsFile {
  updatedAt?: string;
  machine?: Record<string, unknown>;
  sections?: Record<string, unknown>;
}

function met(f: Figure): boolean | undefined {
  if (f.target === undefined) return undefined;
  return f.higherIsBetter === true ? f.value >= f.target : f.value <= f.target;
}

function round(v: number): number {
  if (!Number.isFinite(v)) return v;
  const digits = Math.abs(v) >= 100 ? 1 : Math.abs(v) >= 1 ? 3 : 4;
  return Number(v.toFixed(digits));
}

/** Prints `figures` and merges them into the results file as `sections[section]`. */
export function recordFigures(
  section: string,
  figures: Readonly<Record<string, Figure>>,
  file = RESULTS_FILE,
): void {
  const rows = Object.entries(figures).map(([name, f]) => {
    const ok = met(f);
    return {
      figure: name,
      value: round(f.value),
      unit: f.unit,
      target: f.target === undefined ? "" : `${f.higherIsBetter === true ? ">=" : "<="} ${f.target}`,
      met: ok === undefined ? "" : ok ? "yes" : "NO",
    };
  });
  console.log(`\n== ${section} ==`);
  console.table(rows);

  let current: ResultsFile = {};
  if (existsSync(file)) {
    try {
      current = JSON.parse(readFileSync(file, "utf8")) as ResultsFile;
    } catch {
      current = {};
    }
  }
  const sections = { ...(current.sections ?? {}) };
  sections[section] = {
    at: new Date().toISOString(),
    figures: Object.fromEntries(
      Object.entries(figures).map(([name, f]) => [name, { ...f, value: round(f.value), met: met(f) }]),
    ),
  };
  const next: ResultsFile = {
    updatedAt: new Date().toISOString(),
    machine: { node: process.version, platform: process.platform, arch: process.arch, cpus: cpus().length },
    sections,
  };
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(next, null, 2)}\n`);
}
