/**
 * The OpenTelemetry semantic-convention names tailswarm records, in one place. The library depends on
 * @opentelemetry/api only, so they are copied from @opentelemetry/semantic-conventions (OpenTelemetry's
 * advice for incubating names, which may change in a minor release); test/telemetry/semconv.test.ts
 * checks every one against the package, so a rename there fails the tests here.
 */

/** Stable (general). */
export const ATTR_ERROR_TYPE = "error.type" as const;
export const ATTR_EXCEPTION_MESSAGE = "exception.message" as const;
export const ATTR_SERVER_ADDRESS = "server.address" as const;
export const ATTR_SERVER_PORT = "server.port" as const;
export const ATTR_CLIENT_ADDRESS = "client.address" as const;
export const ATTR_CLIENT_PORT = "client.port" as const;

/** Stable (RPC). */
export const ATTR_RPC_SYSTEM_NAME = "rpc.system.name" as const;
export const ATTR_RPC_METHOD = "rpc.method" as const;
export const RPC_SYSTEM_NAME_VALUE_GRPC = "grpc" as const;

/** Incubating. */
export const ATTR_RPC_RESPONSE_STATUS_CODE = "rpc.response.status_code" as const;
/** The region the resource runs in: the node's `region`. */
export const ATTR_CLOUD_REGION = "cloud.region" as const;
