/**
 * What a V8 heap snapshot holds, by constructor: count and self size of each kind of object, or what a
 * second snapshot of the same process holds more than the first (e.g. the two the overload bench
 * writes with OVERLOAD_HEAP_DIR: after the sustainable phase, then in the burst). Objects are named as
 * DevTools names them: a constructor, `closure name`, `native …`, or a V8 type in parentheses.
 *
 *   npx tsx bench/heap-summary.ts <a.heapsnapshot> [b.heapsnapshot] [--top N]
 *   npx tsx bench/heap-summary.ts <a.heapsnapshot> <b.heapsnapshot> --retainers ServerHttp2Stream
 *
 * `--retainers NAME`: the objects named NAME that b holds and a did not (by V8's snapshot ids, stable
 * within a process), grouped by what refers to them (the referrer's name and the reference's name): what
 * keeps them alive one step up.
 */
import { readFileSync } from "node:fs";

interface Snapshot {
  readonly snapshot: {
    readonly meta: {
      readonly node_fields: string[];
      readonly node_types: [string[], ...unknown[]];
      readonly edge_fields: string[];
      readonly edge_types: [string[], ...unknown[]];
    };
  };
  readonly nodes: number[];
  readonly edges: number[];
  readonly strings: string[];
}

/** One snapshot's nodes, read through its field layout. */
class Heap {
  readonly s: Snapshot;
  readonly #nf: number;
  readonly #field: (name: string) => number;

  constructor(file: string) {
    this.s = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
    const fields = this.s.snapshot.meta.node_fields;
    this.#nf = fields.length;
    this.#field = (name) => fields.indexOf(name);
  }

  get count(): number {
    return this.s.nodes.length / this.#nf;
  }

  value(node: number, field: string): number {
    return this.s.nodes[node * this.#nf + this.#field(field)]!;
  }

  name(node: number): string {
    const type = this.s.snapshot.meta.node_types[0][this.value(node, "type")]!;
    const name = this.s.strings[this.value(node, "name")]!.slice(0, 60);
    if (type === "object") return name;
    if (type === "closure") return `closure ${name}`;
    if (type === "native") return `native ${name}`;
    return `(${type})`;
  }

  ids(): Set<number> {
    const ids = new Set<number>();
    for (let n = 0; n < this.count; n++) ids.add(this.value(n, "id"));
    return ids;
  }
}

function byName(h: Heap): Map<string, [number, number]> {
  const by = new Map<string, [number, number]>();
  for (let n = 0; n < h.count; n++) {
    const e = by.get(h.name(n)) ?? [0, 0];
    e[0]++;
    e[1] += h.value(n, "self_size");
    by.set(h.name(n), e);
  }
  return by;
}

function retainers(a: Heap, b: Heap, wanted: string): Map<string, [number, number]> {
  const old = a.ids();
  const { edge_fields: ef, edge_types } = b.s.snapshot.meta;
  const nf = b.s.snapshot.meta.node_fields.length;
  const [typeAt, nameAt, toAt] = ["type", "name_or_index", "to_node"].map((f) => ef.indexOf(f)) as [
    number,
    number,
    number,
  ];
  const by = new Map<string, [number, number]>();
  let edge = 0;
  for (let n = 0; n < b.count; n++) {
    const end = edge + b.value(n, "edge_count") * ef.length;
    for (; edge < end; edge += ef.length) {
      const to = b.s.edges[edge + toAt]! / nf;
      const type = edge_types[0][b.s.edges[edge + typeAt]!]!;
      if (type === "weak" || b.name(to) !== wanted || old.has(b.value(to, "id"))) continue;
      const ref =
        type === "element" || type === "hidden" ? `[${type}]` : b.s.strings[b.s.edges[edge + nameAt]!];
      const key = `${b.name(n)} .${ref}`;
      const e = by.get(key) ?? [0, 0];
      e[0]++;
      e[1] += b.value(to, "self_size");
      by.set(key, e);
    }
  }
  return by;
}

/** `rows` by size, largest first, after their total (`of`: what is summed). */
function print(rows: Map<string, [number, number]>, top: number, of = "objects"): void {
  const sorted = [...rows].sort((x, y) => y[1][1] - x[1][1]);
  const total = sorted.reduce((sum, [, [, size]]) => sum + size, 0);
  console.log(`${of}: ${(total / 2 ** 20).toFixed(1)} MiB`);
  console.table(
    sorted.slice(0, top).map(([name, [count, size]]) => ({ name, count, KiB: Math.round(size / 1024) })),
  );
}

const args = process.argv.slice(2);
const option = (flag: string): string | undefined => {
  const i = args.indexOf(flag);
  return i < 0 ? undefined : args.splice(i, 2)[1];
};
const top = Number(option("--top") ?? 40);
const wanted = option("--retainers");
const [fileA, fileB] = args;
if (fileA === undefined || (wanted !== undefined && fileB === undefined)) {
  console.error("usage: heap-summary.ts <a.heapsnapshot> [b.heapsnapshot] [--top N] [--retainers NAME]");
  process.exit(2);
}
const a = new Heap(fileA);
if (fileB === undefined) print(byName(a), top);
else {
  const b = new Heap(fileB);
  // an object referred to twice is counted under both references
  if (wanted !== undefined) print(retainers(a, b, wanted), top, `references to new ${wanted}`);
  else {
    const before = byName(a);
    const diff = new Map<string, [number, number]>();
    for (const [name, [count, size]] of byName(b)) {
      const [c0, s0] = before.get(name) ?? [0, 0];
      diff.set(name, [count - c0, size - s0]);
    }
    for (const [name, [c0, s0]] of before) if (!diff.has(name)) diff.set(name, [-c0, -s0]);
    print(diff, top);
  }
}
