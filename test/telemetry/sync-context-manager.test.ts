import { createContextKey, ROOT_CONTEXT } from "@opentelemetry/api";
import { describe, expect, it } from "vitest";
import { SyncContextManager } from "../../src/telemetry/sdk/sync-context-manager.js";

const KEY = createContextKey("test");

describe("SyncContextManager", () => {
  it("makes a context active while a function runs synchronously, nested, and restores it", () => {
    const m = new SyncContextManager().enable();
    const a = ROOT_CONTEXT.setValue(KEY, "a");
    const b = ROOT_CONTEXT.setValue(KEY, "b");
    expect(m.active()).toBe(ROOT_CONTEXT);
    const seen = m.with(
      a,
      (x: number) => {
        const inner = m.with(b, () => m.active().getValue(KEY));
        return [x, m.active().getValue(KEY), inner];
      },
      undefined,
      7,
    );
    expect(seen).toEqual([7, "a", "b"]);
    expect(m.active()).toBe(ROOT_CONTEXT);
  });

  it("restores the previous context when the function throws", () => {
    const m = new SyncContextManager();
    const a = ROOT_CONTEXT.setValue(KEY, "a");
    expect(() =>
      m.with(a, () => {
        throw new Error("boom");
      }),
    ).toThrow("boom");
    expect(m.active()).toBe(ROOT_CONTEXT);
  });

  it("does not carry the context across an await (that is what it leaves out); bind does", async () => {
    const m = new SyncContextManager();
    const a = ROOT_CONTEXT.setValue(KEY, "a");
    const later = await m.with(a, async () => {
      await Promise.resolve();
      return m.active().getValue(KEY);
    });
    expect(later).toBeUndefined();
    const bound = m.bind(a, () => m.active().getValue(KEY));
    expect(await Promise.resolve().then(bound)).toBe("a");
    expect(m.bind(a, 42)).toBe(42);
    m.with(a, () => m.disable());
    expect(m.active()).toBe(ROOT_CONTEXT);
  });
});
