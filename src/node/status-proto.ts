/**
 * The `tailswarm.v1.NodeStatus` service (proto/tailswarm/v1/node_status.proto). Its messages' types
 * are generated from the proto (src/mesh/gen/tailswarm/v1/StatusReply.ts).
 */
import type { ServiceDefinition } from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { LOADER_OPTIONS } from "../mesh/proto.js";

const NODE_STATUS_SERVICE = "tailswarm.v1.NodeStatus";

let cached: ServiceDefinition | undefined;

/** The service definition (loaded once). */
export function nodeStatusService(): ServiceDefinition {
  cached ??= protoLoader.loadSync("tailswarm/v1/node_status.proto", LOADER_OPTIONS)[
    NODE_STATUS_SERVICE
  ] as ServiceDefinition;
  return cached;
}
