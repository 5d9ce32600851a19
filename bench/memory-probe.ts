/**
 * What a node's resident memory is made of, for the overload bench (OVERLOAD_MEMORY=1 preloads it in
 * the coordinator: `node --import ./bench/memory-probe.ts`). Every 100 ms it appends one JSON line to
 * MEMORY_PROBE_FILE, MiB: RSS; V8's heap committed and used, and `external` (process.memoryUsage());
 * and RSS by mapping (/proc/self/smaps): file-backed (the node binary and libraries), glibc's main
 * malloc arena (`[heap]`), anonymous 256 KiB mappings (the size V8 maps its heap pages in; what
 * else lands in them was not checked), and other anonymous mappings (other threads' malloc arenas, V8's large
 * objects and code, stacks). Reading smaps costs the node CPU: not for runs whose CPU is quoted.
 */
import { appendFileSync, readFileSync } from "node:fs";
import { memoryUsage } from "node:process";

const FILE = process.env.MEMORY_PROBE_FILE;
const MIB = 1024 * 1024;
const MAPPING = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s*(.*)$/;
const RSS = /^Rss:\s+(\d+) kB/;

export interface MemorySample {
  readonly at: number;
  readonly rss: number;
  readonly v8Committed: number;
  readonly v8Used: number;
  readonly external: number;
  readonly fileBacked: number;
  readonly mallocMain: number;
  readonly anon256k: number;
  readonly anonOther: number;
}

function sample(): MemorySample {
  const m = memoryUsage();
  const by = { fileBacked: 0, mallocMain: 0, anon256k: 0, anonOther: 0 };
  let kind: keyof typeof by = "anonOther";
  for (const line of readFileSync("/proc/self/smaps", "utf8").split("\n")) {
    const map = MAPPING.exec(line);
    if (map !== null) {
      const bytes = parseInt(map[2]!, 16) - parseInt(map[1]!, 16);
      const name = map[3]!;
      kind =
        name === "[heap]"
          ? "mallocMain"
          : name !== "" && !name.startsWith("[")
            ? "fileBacked"
            : name === "" && bytes === 256 * 1024
              ? "anon256k"
              : "anonOther";
      continue;
    }
    const rss = RSS.exec(line);
    if (rss !== null) by[kind] += (Number(rss[1]) * 1024) / MIB;
  }
  return {
    at: Date.now(),
    rss: m.rss / MIB,
    v8Committed: m.heapTotal / MIB,
    v8Used: m.heapUsed / MIB,
    external: m.external / MIB,
    ...by,
  };
}

if (FILE !== undefined) {
  setInterval(() => appendFileSync(FILE, `${JSON.stringify(sample())}\n`), 100).unref();
}
