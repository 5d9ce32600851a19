/**
 * Semantic-convention names that are still incubating in @opentelemetry/semantic-conventions (stable
 * ones are imported from the package). Copied here, as OpenTelemetry advises: its `/incubating` entry
 * point may change them in a minor release, and it loads every incubating name at start-up.
 */

/** The region the resource runs in: the node's `region`. */
export const ATTR_CLOUD_REGION = "cloud.region" as const;
