import { describe, expect, it } from "vitest";
import { MAX_ECHO_CHARS, TailswarmError, expectation, invalid, showValue } from "../src/errors.js";

describe("the one message style", () => {
  it("names the field, the value, its source and what was expected", () => {
    expect(expectation("probe.intervalMs", 0, "a number > 0", "env TAILSWARM_PROBE_INTERVAL_MS")).toBe(
      "probe.intervalMs: got 0 (from env TAILSWARM_PROBE_INTERVAL_MS), expected a number > 0",
    );
    expect(expectation("kind", "", "a non-empty string")).toBe('kind: got "", expected a non-empty string');
  });

  it("shows values of every type without throwing", () => {
    expect(showValue(undefined)).toBe("nothing");
    expect(showValue(NaN)).toBe("NaN");
    expect(showValue(-Infinity)).toBe("-Infinity");
    expect(showValue(10n)).toBe("10");
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(showValue(cyclic)).toBe("[object Object]");
  });

  it("never repeats more than MAX_ECHO_CHARS of a value, and gives its length", () => {
    const huge = "x".repeat(100_000);
    const shown = showValue(huge);
    expect(shown.length).toBeLessThan(MAX_ECHO_CHARS + 30);
    expect(shown).toMatch(/… \(100002 chars\)$/);
    expect(expectation("kind", huge, "a task kind").length).toBeLessThan(MAX_ECHO_CHARS + 60);
  });

  it("builds a TailswarmError with the code asked for", () => {
    const e = invalid("listen", "x", "host:port", { source: "flag --listen", code: "INVALID_CONFIG" });
    expect(e).toBeInstanceOf(TailswarmError);
    expect(e.code).toBe("INVALID_CONFIG");
    expect(e.message).toBe('listen: got "x" (from flag --listen), expected host:port');
    expect(invalid("a", 1, "b").code).toBe("INVALID_ARGUMENT");
  });
});
