/** The node's configuration, fully resolved (defaults applied, validated): the types of the schema. */
import type { z } from "zod";
import type { nodeConfigSchema } from "./schema.js";

export type NodeConfig = z.output<typeof nodeConfigSchema>;
export type LogLevel = NodeConfig["logLevel"];
export type TlsConfig = NodeConfig["tls"];
export type HandlerEntry = NodeConfig["handlers"][number];
