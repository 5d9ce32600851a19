/**
 * Rendered objects checked against the schemas a current Kubernetes serves: the OpenAPI schemas of
 * Kubernetes 1.36 (`kubernetes-models`), cert-manager's and the Prometheus Operator's CRD schemas
 * (`@kubernetes-models/cert-manager`, `@kubernetes-models/prometheus-operator`). Types, enums,
 * required fields and formats come from the schemas; unknown fields — which `kubectl apply`
 * refuses under its default strict field validation, and which the schemas do not forbid — are
 * found by watching which properties the schema's validator reads: a property of an object that the
 * validator inspects but never reads is not in the schema. Every problem names the field.
 *
 * The multi-cluster services API (`multicluster.x-k8s.io/v1alpha1` ServiceExport) has no schema
 * package offline; its schema is small enough to check here (apiVersion, kind, metadata, status).
 */
import { Namespace } from "kubernetes-models/v1/Namespace";
import { ServiceAccount } from "kubernetes-models/v1/ServiceAccount";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Service } from "kubernetes-models/v1/Service";
import { StatefulSet } from "kubernetes-models/apps/v1/StatefulSet";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { NetworkPolicy } from "kubernetes-models/networking.k8s.io/v1/NetworkPolicy";
import { ObjectMeta } from "@kubernetes-models/apimachinery/apis/meta/v1/ObjectMeta";
import { Certificate } from "@kubernetes-models/cert-manager/cert-manager.io/v1/Certificate";
import { ClusterIssuer } from "@kubernetes-models/cert-manager/cert-manager.io/v1/ClusterIssuer";
import { PodMonitor } from "@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PodMonitor";
import type { KubeObject } from "./kustomize.js";

interface Validates {
  prototype: { validate(): void };
}

const MODELS: Readonly<Record<string, Validates>> = {
  "v1/Namespace": Namespace,
  "v1/ServiceAccount": ServiceAccount,
  "v1/ConfigMap": ConfigMap,
  "v1/Service": Service,
  "apps/v1/StatefulSet": StatefulSet,
  "policy/v1/PodDisruptionBudget": PodDisruptionBudget,
  "networking.k8s.io/v1/NetworkPolicy": NetworkPolicy,
  "cert-manager.io/v1/Certificate": Certificate,
  "cert-manager.io/v1/ClusterIssuer": ClusterIssuer,
  "monitoring.coreos.com/v1/PodMonitor": PodMonitor,
};

/** Validates the ServiceExport's shape: it has no spec, only metadata (and a status the controller writes). */
const serviceExport: Validates = {
  prototype: {
    validate(this: Record<string, unknown>) {
      void this.apiVersion;
      void this.kind;
      void this.status;
      ObjectMeta.prototype.validate.call(this.metadata);
    },
  },
};

interface Watched {
  readonly path: string;
  readonly target: object;
  readonly read: Set<string>;
  enumerated: boolean;
}

/** A view of `value` that records, per object, which properties are read and whether keys are listed. */
function watch(value: unknown, path: string, seen: Watched[], cache: WeakMap<object, unknown>): unknown {
  if (value === null || typeof value !== "object") return value;
  const hit = cache.get(value);
  if (hit !== undefined) return hit;
  const record: Watched = { path, target: value, read: new Set(), enumerated: false };
  if (!Array.isArray(value)) seen.push(record);
  const child = (key: string): string =>
    Array.isArray(value) ? `${path}[${key}]` : path === "" ? key : `${path}.${key}`;
  const proxy = new Proxy(value, {
    get(target, key, receiver) {
      const v: unknown = Reflect.get(target, key, receiver);
      if (typeof key !== "string" || (Array.isArray(target) && !/^\d+$/.test(key))) return v;
      record.read.add(key);
      return watch(v, child(key), seen, cache);
    },
    getOwnPropertyDescriptor(target, key) {
      if (typeof key === "string") record.read.add(key);
      return Reflect.getOwnPropertyDescriptor(target, key);
    },
    has(target, key) {
      if (typeof key === "string") record.read.add(key);
      return Reflect.has(target, key);
    },
    ownKeys(target) {
      record.enumerated = true;
      return Reflect.ownKeys(target);
    },
  });
  cache.set(value, proxy);
  return proxy;
}

function schemaErrors(err: unknown): string[] {
  const errors = (err as { errors?: { instancePath: string; message?: string }[] }).errors;
  if (errors === undefined) return [(err as Error).message];
  return errors.map((e) => {
    const field = e.instancePath
      .split("/")
      .slice(1)
      .map((p) => p.replace(/~1/g, "/").replace(/~0/g, "~"))
      .reduce((acc, p) => (/^\d+$/.test(p) ? `${acc}[${p}]` : acc === "" ? p : `${acc}.${p}`), "");
    return `${field || "(object)"}: ${e.message ?? "invalid"}`;
  });
}

/**
 * Problems of one object, each `Kind/name field: what` (empty when it is valid). A kind with no
 * schema here is a problem too: nothing is passed unchecked.
 */
export function validateObject(o: KubeObject): string[] {
  const id = `${o.kind}/${o.metadata?.name ?? "?"}`;
  const key = `${o.apiVersion}/${o.kind}`;
  const model = key === "multicluster.x-k8s.io/v1alpha1/ServiceExport" ? serviceExport : MODELS[key];
  if (model === undefined) return [`${id}: no schema for ${key} in the validator`];
  const seen: Watched[] = [];
  const data = watch(structuredClone(o), "", seen, new WeakMap());
  try {
    model.prototype.validate.call(data);
  } catch (err) {
    return schemaErrors(err).map((e) => `${id} ${e}`);
  }
  const unknown: string[] = [];
  for (const w of seen) {
    // An object the validator never looked into is free-form (x-kubernetes-preserve-unknown-fields).
    if (w.enumerated || w.read.size === 0) continue;
    for (const k of Object.keys(w.target)) {
      if (!w.read.has(k)) unknown.push(`${id} ${w.path === "" ? k : `${w.path}.${k}`}: unknown field`);
    }
  }
  return unknown;
}
