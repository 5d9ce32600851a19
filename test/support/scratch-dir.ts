import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import type { File, Suite, Task } from "vitest";

function failed(task: Readonly<Task>): boolean {
  if (task.result?.state === "fail") return true;
  return "tasks" in task && task.tasks.some(failed);
}

/**
 * A scratch directory for the tests of the calling scope (a file or a describe): made under the OS temp dir
 * the first time the returned function is called — so a skipped suite makes none — and removed after those
 * tests, unless one of them failed, when it is kept and its path printed for a person to read.
 */
export function scratchDir(name: string): () => string {
  let dir: string | undefined;
  afterAll((suite: Readonly<Suite | File>) => {
    if (dir === undefined) return;
    if (failed(suite)) {
      console.error(`kept ${dir} (a test failed)`);
      return;
    }
    rmSync(dir, { recursive: true, force: true });
  });
  return () => (dir ??= mkdtempSync(join(tmpdir(), `tailswarm-${name}-`)));
}
