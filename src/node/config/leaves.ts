/**
 * The keys of a config schema as the loader, `--help` and the docs see them: one leaf per settable
 * key (a group such as `probe` is not a key; its members are), with its dotted path, schema, metadata,
 * doc line and default. And the JSON Schema of a config schema, for editors and for validating a
 * Kubernetes ConfigMap's node.yaml.
 */
import { z } from "zod";
import { defaultOf, fieldInfo, infoOf, inner, objectOf } from "./fields.js";
import type { FieldInfo } from "./fields.js";

export interface ConfigLeaf {
  /** Dotted path in the config object. */
  readonly path: string;
  readonly schema: z.ZodType;
  readonly info: FieldInfo;
  readonly doc: string;
  /** The default (computed ones computed once); undefined: optional, absent by default. */
  readonly default: unknown;
}

function descriptionOf(schema: z.ZodType): string {
  let s: z.ZodType | undefined = schema;
  while (s !== undefined) {
    if (s.description !== undefined) return s.description;
    s = inner(s);
  }
  return "";
}

/** Every settable key of `schema`, in declaration order. */
export function leavesOf(schema: z.ZodObject, prefix = ""): ConfigLeaf[] {
  const out: ConfigLeaf[] = [];
  for (const [key, child] of Object.entries(schema.shape) as [string, z.ZodType][]) {
    const path = prefix === "" ? key : `${prefix}.${key}`;
    const info = infoOf(child);
    const obj = objectOf(child);
    if (info === undefined && obj !== undefined) {
      out.push(...leavesOf(obj, path));
      continue;
    }
    if (info === undefined) throw new Error(`config schema: ${path} has no field info`);
    out.push({ path, schema: child, info, doc: descriptionOf(child), default: defaultOf(child) });
  }
  return out;
}

/**
 * The JSON Schema (draft 2020-12) of what a file may hold: defaults shown except computed ones, a list
 * also accepted as a comma-separated string, zod's integer bounds left out where the schema set none.
 */
export function jsonSchemaOf(schema: z.ZodType, meta: { title: string }): Record<string, unknown> {
  const json = z.toJSONSchema(schema, {
    io: "input",
    target: "draft-2020-12",
    unrepresentable: "any",
    override: (ctx) => {
      const zs = ctx.zodSchema as unknown as z.ZodType;
      const s = ctx.jsonSchema as Record<string, unknown>;
      if (zs instanceof z.ZodDefault && infoOf(zs)?.computedDefault === true) delete s.default;
      if (s.maximum === Number.MAX_SAFE_INTEGER) delete s.maximum;
      if (s.minimum === Number.MIN_SAFE_INTEGER) delete s.minimum;
      const alsoText = fieldInfo.get(zs)?.alsoText;
      if (alsoText !== undefined) {
        const typed = { ...s };
        for (const k of Object.keys(s)) delete s[k];
        s.anyOf = [typed, { type: "string", description: alsoText }];
      }
    },
  }) as Record<string, unknown>;
  return { $schema: json.$schema, title: meta.title, ...json };
}
