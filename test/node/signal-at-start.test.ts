/**
 * `tailswarm node` takes SIGTERM from before it is up: a signal sent the moment it logs "listening"
 * (while it may still be starting) stops it gracefully — exit 0 with its "stopped" line — rather than
 * killing it by the signal's default action before its handlers are installed.
 */
import { describe, expect, it } from "vitest";
import { spawnNode } from "./helpers/spawn-node.js";

describe("tailswarm node, signalled as it starts", () => {
  it("drains and exits 0 on a SIGTERM sent on its listening line", async () => {
    for (let i = 0; i < 3; i++) {
      const n = await spawnNode(["--listen", "127.0.0.1:0", "--node-id", `s${i}`]);
      n.kill("SIGTERM");
      expect(await n.exited).toBe(0);
      expect(n.logs.find((l) => l.msg === "stopped")?.drained).toBe(true);
    }
  });
});
