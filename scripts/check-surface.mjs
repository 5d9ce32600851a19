// `npm run lint` step: fails on a regression of the public surface or on dead files.
//  1. Every name src/index.ts exports is imported from "tailswarm" by test/public-api.test.ts or by an
//     example in README.md, docs/ or examples/; and there are at most MAX_PUBLIC of them.
//  2. Every file under src/ is reached from an entry point (src/index.ts, src/internal.ts,
//     src/cli/main.ts and what package.json's exports, main and bin name) through imports, dynamic
//     imports and `new URL("./file.js", import.meta.url)` (processes the code spawns).
//  3. The library entry points (src/index.ts, src/internal.ts) reach nothing of the CLI, the testbed,
//     the simulator or the SDK set-up.
// Reads the files as text (no type checking), so it runs in well under a second. Skips src/mesh/gen/,
// the wire types generated from proto/ (scripts/generate-proto.sh): the proto decides what is there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import process from "node:process";
import { fileURLToPath } from "node:url";
import ts from "typescript";

const MAX_PUBLIC = 60;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const LIBRARY_ENTRIES = ["src/index.ts", "src/internal.ts"];
const NOT_LIBRARY = ["src/cli/", "src/testbed/", "src/sim/", "src/telemetry/sdk/"];
const PUBLIC_API_TEST = "test/public-api.test.ts";

const rel = (abs) => relative(ROOT, abs).split("\\").join("/");
const read = (file) => readFileSync(join(ROOT, file), "utf8");

function walk(dir, keep, out = []) {
  if (!existsSync(join(ROOT, dir))) return out;
  for (const name of readdirSync(join(ROOT, dir))) {
    const file = `${dir}/${name}`;
    if (statSync(join(ROOT, file)).isDirectory()) walk(file, keep, out);
    else if (keep(file)) out.push(file);
  }
  return out;
}

const problems = [];

// 1. The public surface.
function exportedNames(file) {
  const sf = ts.createSourceFile(file, read(file), ts.ScriptTarget.Latest, false);
  const names = [];
  for (const st of sf.statements) {
    if (ts.isExportDeclaration(st)) {
      if (st.exportClause === undefined || !ts.isNamedExports(st.exportClause)) {
        problems.push(`${file}: \`export *\` hides what the surface is; name each export`);
        continue;
      }
      for (const e of st.exportClause.elements) names.push(e.name.text);
    } else if (
      ts.canHaveModifiers(st) &&
      ts.getModifiers(st)?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)
    ) {
      if (ts.isVariableStatement(st))
        for (const d of st.declarationList.declarations) names.push(d.name.getText(sf));
      else if (st.name !== undefined) names.push(st.name.text);
    }
  }
  return names;
}

/** Names imported from "tailswarm" in `text` (`import { A, type B, C as D } from "tailswarm"`). */
function importedFromPackage(text) {
  const out = new Set();
  for (const m of text.matchAll(/import\s+(?:type\s+)?\{([^}]*)\}\s*from\s*["']tailswarm["']/g)) {
    for (const part of m[1].split(",")) {
      const name = part
        .trim()
        .replace(/^type\s+/, "")
        .split(/\s+as\s+/)[0]
        .trim();
      if (name !== "") out.add(name);
    }
  }
  return out;
}

const publicNames = exportedNames("src/index.ts");
if (publicNames.length > MAX_PUBLIC) {
  problems.push(
    `src/index.ts exports ${publicNames.length} names, more than ${MAX_PUBLIC}: move what an embedding application does not need to src/internal.ts`,
  );
}
const usedBy = new Map(); // name -> first file using it
const users = [
  PUBLIC_API_TEST,
  "README.md",
  ...walk("docs", (f) => f.endsWith(".md")),
  ...walk("examples", (f) => /\.(ts|mts|js|mjs)$/.test(f)),
];
for (const file of users) {
  if (!existsSync(join(ROOT, file))) continue;
  for (const name of importedFromPackage(read(file))) if (!usedBy.has(name)) usedBy.set(name, file);
}
for (const name of publicNames) {
  if (!usedBy.has(name)) {
    problems.push(
      `src/index.ts exports ${name}, which neither ${PUBLIC_API_TEST} nor a README/docs example imports from "tailswarm": use it there, or move it to src/internal.ts`,
    );
  }
}

// 2. Dead files, and 3. what the library entry points reach.
const GENERATED = "src/mesh/gen/";
const sources = walk("src", (f) => f.endsWith(".ts") && !f.endsWith(".d.ts") && !f.startsWith(GENERATED));
const known = new Set(sources);

/** A relative specifier from `from` as the src/ file it names (`./x.js` → `x.ts`), or undefined. */
function target(from, spec) {
  if (!spec.startsWith("./") && !spec.startsWith("../")) return undefined;
  const abs = resolve(ROOT, dirname(from), spec);
  for (const candidate of [abs.replace(/\.js$/, ".ts"), abs, `${abs}.ts`, join(abs, "index.ts")]) {
    const r = rel(candidate);
    if (known.has(r)) return r;
  }
  return undefined;
}

const edges = new Map();
for (const file of sources) {
  const text = read(file);
  const out = new Set();
  for (const ref of ts.preProcessFile(text, true, true).importedFiles) {
    const t = target(file, ref.fileName);
    if (t !== undefined) out.add(t);
  }
  for (const m of text.matchAll(/new URL\(([\s\S]*?)import\.meta\.url\s*,?\s*\)/g)) {
    for (const s of m[1].matchAll(/["'](\.{1,2}\/[^"']+)["']/g)) {
      const t = target(file, s[1]);
      if (t !== undefined) out.add(t);
    }
  }
  edges.set(file, out);
}

const pkg = JSON.parse(read("package.json"));
const declared = [];
const collect = (v) => {
  if (typeof v === "string") declared.push(v);
  else if (v !== null && typeof v === "object") for (const x of Object.values(v)) collect(x);
};
collect(pkg.exports);
collect(pkg.main);
collect(pkg.bin);
const entries = new Set(["src/index.ts", "src/internal.ts", "src/cli/main.ts"]);
for (const d of declared) {
  const m = /^(?:\.\/)?dist\/(.+)\.js$/.exec(d);
  if (m === null) continue;
  const src = `src/${m[1]}.ts`;
  if (known.has(src)) entries.add(src);
  else problems.push(`package.json names ${d}, but ${src} does not exist`);
}

/** Files reached from `starts`, each with the file it was first reached from. */
function reach(starts) {
  const via = new Map(starts.map((s) => [s, undefined]));
  const queue = [...starts];
  while (queue.length > 0) {
    const file = queue.shift();
    for (const next of edges.get(file) ?? []) {
      if (via.has(next)) continue;
      via.set(next, file);
      queue.push(next);
    }
  }
  return via;
}

const reached = reach([...entries]);
for (const file of sources) {
  if (!reached.has(file)) {
    problems.push(
      `${file}: no entry point reaches it (${[...entries].join(", ")}): import it where it is used, or delete it`,
    );
  }
}

const library = reach(LIBRARY_ENTRIES);
const outside = (file) => NOT_LIBRARY.some((dir) => file.startsWith(dir));
for (const [file, from] of library) {
  // where the library first steps out (what lies beyond is reached through this file)
  if (!outside(file) || from === undefined || outside(from)) continue;
  const path = [file];
  for (let f = library.get(file); f !== undefined; f = library.get(f)) path.unshift(f);
  problems.push(
    `${path[0]} reaches ${file} (${path.join(" → ")}): the CLI, testbed, simulator and SDK set-up are not part of the library`,
  );
}

if (problems.length > 0) {
  for (const p of problems) process.stderr.write(`check-surface: ${p}\n`);
  process.exitCode = 1;
}
