import * as stable from "@opentelemetry/semantic-conventions";
import * as incubating from "@opentelemetry/semantic-conventions/incubating";
import { describe, expect, it } from "vitest";
import * as ours from "../../src/telemetry/semconv.js";

describe("semantic-convention names", () => {
  it("are the package's: stable ones from its main entry, the rest from /incubating", () => {
    const names = Object.entries(ours);
    expect(names.length).toBeGreaterThan(0);
    for (const [key, value] of names) {
      const theirs = (stable as Record<string, unknown>)[key] ?? (incubating as Record<string, unknown>)[key];
      expect({ key, value: theirs }).toEqual({ key, value });
    }
    // the ones filed as stable here are stable there
    for (const key of ["ATTR_SERVER_ADDRESS", "ATTR_CLIENT_ADDRESS", "ATTR_RPC_METHOD", "ATTR_ERROR_TYPE"])
      expect((stable as Record<string, unknown>)[key]).toBe((ours as Record<string, unknown>)[key]);
  });
});
