import { context, ROOT_CONTEXT, trace, TraceFlags } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, silentLogger } from "../../src/node/logger.js";
import { prettyLine } from "../../src/node/pretty-log.js";

const SPAN = {
  traceId: "0af7651916cd43dd8448eb211c80319c",
  spanId: "b7ad6b7169203331",
  traceFlags: TraceFlags.SAMPLED,
};

function capture(level: "debug" | "info" | "warn" | "error" | "silent", trace?: Set<string>) {
  const lines: Record<string, unknown>[] = [];
  const log = createLogger({ level, trace, write: (l) => void lines.push(JSON.parse(l)), now: () => 0 });
  return { log, lines };
}

describe("logger", () => {
  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  });
  afterAll(() => {
    context.disable();
  });

  it("writes one JSON object per line: level, ts, module, msg and the fields, errors without stacks", () => {
    const { log, lines } = capture("info");
    const err = Object.assign(new Error("refused"), { code: "ECONNREFUSED" });
    log.child("mesh").info("listening", { address: "127.0.0.1:7400", error: err });
    expect(lines).toEqual([
      {
        level: "info",
        ts: "1970-01-01T00:00:00.000Z",
        module: "mesh",
        msg: "listening",
        address: "127.0.0.1:7400",
        error: { name: "Error", message: "refused", code: "ECONNREFUSED" },
      },
    ]);
  });

  it("carries the trace and span id of the active span, across an await", async () => {
    const { log, lines } = capture("info");
    log.info("outside");
    await context.with(trace.setSpanContext(ROOT_CONTEXT, SPAN), async () => {
      await new Promise((r) => setTimeout(r, 1));
      log.info("inside");
    });
    expect(lines[0]).not.toHaveProperty("trace_id");
    expect(lines[1]).toMatchObject({
      msg: "inside",
      trace_id: SPAN.traceId,
      span_id: SPAN.spanId,
      trace_flags: "01",
    });
  });

  it("writes debug lines of traced modules only, below the level", () => {
    const { log, lines } = capture("warn", new Set(["engine"]));
    log.child("engine").debug("fanout end", { mode: "speculate" });
    log.child("mesh").debug("not traced");
    log.child("mesh").info("below the level");
    log.child("mesh").warn("written");
    expect(lines.map((l) => l.msg)).toEqual(["fanout end", "written"]);
    expect(log.child("engine").tracing).toBe(true);
    expect(log.child("mesh").tracing).toBe(false);
    expect(silentLogger.tracing).toBe(false);
  });

  it("prints a line for a person: time, level, module, message, fields, trace ids last", () => {
    const line = JSON.stringify({
      level: "warn",
      ts: "2026-01-01T12:04:05.120Z",
      module: "node",
      trace_id: SPAN.traceId,
      span_id: SPAN.spanId,
      trace_flags: "01",
      peer: "b",
      note: "two words",
      n: 3,
      msg: "peer down",
    });
    expect(prettyLine(`${line}\n`, false)).toBe(
      `12:04:05.120 WARN  node  peer down peer=b note="two words" n=3 trace_id=${SPAN.traceId} span_id=${SPAN.spanId}\n`,
    );
    const lines: string[] = [];
    createLogger({ level: "info", format: "pretty", write: (l) => void lines.push(l), now: () => 0 }).info(
      "up",
    );
    expect(lines).toEqual(["00:00:00.000 INFO  node  up\n"]);
  });
});
