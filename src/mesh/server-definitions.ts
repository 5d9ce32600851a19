/**
 * The service definitions every `createSwarmServer` registers besides its own handlers: the health
 * proto for reflection and the reflection services themselves. Loaded once per process and shared by
 * every server in it (`tailswarm host` runs hundreds of nodes in one process; loading them per server
 * cost seconds of start-up and a copy of the descriptors per node). Reflection's handlers read only
 * the descriptors they were built from, so one instance serves every server.
 */
import type * as grpc from "@grpc/grpc-js";
import * as protoLoader from "@grpc/proto-loader";
import { ReflectionService } from "@grpc/reflection";
import { protoPath as healthProtoPath } from "grpc-health-check";
import { swarmPackageDefinition } from "./proto.js";

interface Registration {
  readonly definition: grpc.ServiceDefinition;
  readonly implementation: grpc.UntypedServiceImplementation;
}

let reflection: readonly Registration[] | undefined;

/** Adds the reflection services (over the Swarm and health protos) to `server`. */
export function addReflection(server: Pick<grpc.Server, "addService">): void {
  reflection ??= reflectionRegistrations();
  for (const r of reflection) server.addService(r.definition, r.implementation);
}

function reflectionRegistrations(): Registration[] {
  const healthDef = protoLoader.loadSync(healthProtoPath, {
    keepCase: true,
    longs: String,
    enums: String,
    defaults: true,
    oneofs: true,
  });
  const captured: Registration[] = [];
  // ReflectionService loads its own protos on every addToServer: run it once against a recorder
  const recorder = {
    addService(definition: grpc.ServiceDefinition, implementation: grpc.UntypedServiceImplementation) {
      captured.push({ definition, implementation });
    },
  };
  new ReflectionService({ ...swarmPackageDefinition(), ...healthDef }).addToServer(recorder);
  return captured;
}
