/**
 * The loaded wire contract (proto/tailswarm/v1/swarm.proto). The TypeScript shapes of its messages
 * are generated from the proto into ./gen/ (scripts/generate-proto.sh): `X` is what a sender may
 * give, `X__Output` what the loader decodes with LOADER_OPTIONS.
 */
import { fileURLToPath } from "node:url";
import * as protoLoader from "@grpc/proto-loader";
import type { SwarmDefinition } from "./gen/tailswarm/v1/Swarm.js";

/** Directory holding `tailswarm/v1/swarm.proto` (works from src/ and from dist/). */
export const PROTO_ROOT = fileURLToPath(new URL("../../proto/", import.meta.url));
export const SWARM_PROTO_FILE = "tailswarm/v1/swarm.proto";
export const SWARM_SERVICE_NAME = "tailswarm.v1.Swarm";

/**
 * How every tailswarm proto is loaded (scripts/generate-proto.sh passes the same as flags):
 * camelCase fields, numbers for 64-bit values, enums as strings, bytes as Buffer, defaults filled.
 * No `oneofs`: the protos have no real oneof, and for a proto3 `optional` field it would add a
 * virtual `_field` member naming the set field to every decoded message.
 */
export const LOADER_OPTIONS: protoLoader.Options = {
  includeDirs: [PROTO_ROOT],
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
};

/** The Swarm service's method names (the generated definition's own keys, not its index signature). */
export type SwarmMethod = keyof { [K in keyof SwarmDefinition as string extends K ? never : K]: K };

let loaded: protoLoader.PackageDefinition | undefined;

/** The package definition (loaded once), for `addService`, clients and reflection. */
export function swarmPackageDefinition(): protoLoader.PackageDefinition {
  loaded ??= protoLoader.loadSync(SWARM_PROTO_FILE, LOADER_OPTIONS);
  return loaded;
}

/** The typed service definition of `tailswarm.v1.Swarm`. */
export function swarmService(): SwarmDefinition {
  return swarmPackageDefinition()[SWARM_SERVICE_NAME] as unknown as SwarmDefinition;
}
