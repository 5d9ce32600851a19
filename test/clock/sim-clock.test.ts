import { describe, expect, it } from "vitest";
import { sleep } from "../../src/clock/clock.js";
import { SimClock } from "../../src/clock/sim-clock.js";

describe("SimClock", () => {
  it("fires timers in (time, insertion) order and stops at the target time", async () => {
    const clock = new SimClock({ start: 1000 });
    const fired: string[] = [];
    clock.setTimer(() => fired.push("b@20"), 20);
    clock.setTimer(() => fired.push("a@10"), 10);
    clock.setTimer(() => fired.push("c@20"), 20);
    clock.setTimer(() => fired.push("late@50"), 50);
    await clock.advance(30);
    expect(fired).toEqual(["a@10", "b@20", "c@20"]);
    expect(clock.now()).toBe(1030);
    expect(clock.pending).toBe(1);
  });

  it("does not fire cancelled timers", async () => {
    const clock = new SimClock();
    const fired: number[] = [];
    const handle = clock.setTimer(() => fired.push(1), 5);
    clock.setTimer(() => fired.push(2), 6);
    handle.cancel();
    handle.cancel();
    expect(clock.pending).toBe(1);
    await clock.runUntilIdle();
    expect(fired).toEqual([2]);
    expect(clock.now()).toBe(6);
  });

  it("lets async code await promises between timers", async () => {
    const clock = new SimClock();
    const seen: number[] = [];
    const run = async (): Promise<void> => {
      await sleep(clock, 10);
      seen.push(clock.now());
      await Promise.resolve();
      await sleep(clock, 10);
      seen.push(clock.now());
    };
    const done = run();
    await clock.advance(25);
    await done;
    expect(seen).toEqual([10, 20]);
  });

  it("runUntilSettled drives the clock until the promise settles and reports a hang", async () => {
    const clock = new SimClock();
    const value = await clock.runUntilSettled(sleep(clock, 40).then(() => clock.now()));
    expect(value).toBe(40);
    await expect(clock.runUntilSettled(new Promise(() => undefined))).rejects.toMatchObject({
      code: "INTERNAL",
    });
  });

  it("timers set from a timer at delay 0 run at the same time, after the current one", async () => {
    const clock = new SimClock();
    const fired: string[] = [];
    clock.setTimer(() => {
      fired.push("first");
      clock.setTimer(() => fired.push("nested"), 0);
    }, 5);
    clock.setTimer(() => fired.push("second"), 5);
    await clock.runUntilIdle();
    expect(fired).toEqual(["first", "second", "nested"]);
    expect(clock.now()).toBe(5);
  });

  it("rejects a negative advance", async () => {
    await expect(new SimClock().advance(-1)).rejects.toMatchObject({ code: "INVALID_ARGUMENT" });
  });
});
