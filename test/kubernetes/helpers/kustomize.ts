/**
 * The manifests under deploy/kubernetes as a cluster would receive them: `kubectl kustomize` renders
 * a directory into objects, and `containerEnv` resolves a container's environment the way the
 * kubelet does (downward-API fields, `$(VAR)` references to variables defined before).
 */
import { execFile, execFileSync } from "node:child_process";
import { existsSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { promisify } from "node:util";
import { parseAllDocuments } from "yaml";

const run = promisify(execFile);
export const repo = new URL("../../../", import.meta.url).pathname;
export const deployDir = join(repo, "deploy/kubernetes");

/** A rendered object; only what the tests read is typed. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** kubectl's client version and the kustomize it embeds, or why there is none fit for these files. */
export function kubectlStatus(): { ok: true; version: string } | { ok: false; why: string } {
  let out: string;
  try {
    out = execFileSync("kubectl", ["version", "--client", "-o", "json"], { encoding: "utf8" });
  } catch (err) {
    return { ok: false, why: `kubectl not runnable (${(err as Error).message.split("\n")[0]})` };
  }
  const v = JSON.parse(out) as { clientVersion?: { gitVersion?: string }; kustomizeVersion?: string };
  const kustomize = v.kustomizeVersion ?? "";
  // Components (kind: Component) need kustomize >= 3.7; kubectl 1.21+ embeds kustomize 4 or later.
  const major = Number(/^v(\d+)/.exec(kustomize)?.[1] ?? 0);
  if (major < 4) {
    return {
      ok: false,
      why: `kubectl ${v.clientVersion?.gitVersion} embeds kustomize ${kustomize || "older than v4 (it does not say)"}; components need v4+`,
    };
  }
  return { ok: true, version: `kubectl ${v.clientVersion?.gitVersion}, kustomize ${kustomize}` };
}

/** Every directory under deploy/kubernetes whose kustomization is a Kustomization (not a Component). */
export function kustomizations(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    const file = join(dir, "kustomization.yaml");
    if (existsSync(file) && !/^kind:\s*Component\s*$/m.test(readFileSync(file, "utf8"))) {
      out.push(relative(deployDir, dir));
    }
    for (const e of readdirSync(dir)) if (statSync(join(dir, e)).isDirectory()) walk(join(dir, e));
  };
  walk(deployDir);
  return out.sort();
}

/** `kubectl kustomize DIR` (relative to deploy/kubernetes, or absolute), parsed. */
export async function render(dir: string): Promise<KubeObject[]> {
  const { stdout } = await run("kubectl", ["kustomize", resolve(deployDir, dir)], { maxBuffer: 16 << 20 });
  return parseAllDocuments(stdout)
    .map((d) => d.toJS() as KubeObject | null)
    .filter((o): o is KubeObject => o !== null);
}

export function find(objects: readonly KubeObject[], kind: string, name?: string): KubeObject {
  const o = objects.find((x) => x.kind === kind && (name === undefined || x.metadata.name === name));
  if (o === undefined) throw new Error(`no ${kind}${name === undefined ? "" : ` ${name}`} rendered`);
  return o;
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; resourceFieldRef?: unknown };
}

/**
 * A container's environment as the kubelet sets it: each `fieldRef` from `fields` (e.g.
 * `metadata.name`), each `$(NAME)` replaced by a variable defined earlier in the list (`$$` is a
 * literal `$`; an unknown reference stays as written).
 */
export function containerEnv(
  env: readonly EnvVar[],
  fields: Readonly<Record<string, string>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    if (e.valueFrom !== undefined) {
      const path = e.valueFrom.fieldRef?.fieldPath;
      if (path === undefined || fields[path] === undefined)
        throw new Error(`env ${e.name}: no value for ${JSON.stringify(e.valueFrom)}`);
      out[e.name] = fields[path];
      continue;
    }
    out[e.name] = (e.value ?? "").replace(
      /\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g,
      (m, name: string | undefined) =>
        m === "$$" ? "$" : name !== undefined && name in out ? out[name]! : m,
    );
  }
  return out;
}
