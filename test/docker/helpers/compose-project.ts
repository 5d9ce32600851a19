/** Checks shared by the docker testbed tests. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { expect } from "vitest";

const run = promisify(execFile);

/** No container, network or volume labelled with compose project `project` is left. */
export async function expectNothingLeft(project: string): Promise<void> {
  const label = `label=com.docker.compose.project=${project}`;
  for (const kind of [
    ["ps", "-aq"],
    ["network", "ls", "-q"],
    ["volume", "ls", "-q"],
  ]) {
    const { stdout } = await run("docker", [...kind, "--filter", label]);
    expect(stdout.trim(), kind.join(" ")).toBe("");
  }
}
