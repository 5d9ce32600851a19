/**
 * A Coordinate whose reply reserve takes its whole time left is refused on arrival, on a real server on
 * loopback, with the reserve kept, the reserve wanted and its parts in the message.
 */
import * as grpc from "@grpc/grpc-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { swarmService } from "../../src/mesh/proto.js";
import { startServer } from "./helpers.js";
import type { Started } from "./helpers.js";

describe("a Coordinate refused on arrival for its reply reserve", () => {
  let s: Started;
  let client: grpc.Client;
  let started = 0;

  beforeAll(async () => {
    s = await startServer({
      nodeId: "coord",
      // the whole time left may go to the reserve, and the loop reads later than the call's deadline
      replyReserveMaxShare: 1,
      replyReserveMaxMs: 10_000,
      loopLateMs: () => 3_000,
      coordinate: () => {
        started++;
        return Promise.reject(new Error("not reached"));
      },
    });
    client = new grpc.Client(s.address, grpc.credentials.createInsecure());
  });
  afterAll(() => {
    client.close();
    s.server.forceClose();
  });

  it("says the reserve kept, the reserve wanted and each part", async () => {
    const m = swarmService().Coordinate;
    const err = await new Promise<grpc.ServiceError | null>((resolve) =>
      client.makeUnaryRequest(
        m.path,
        m.requestSerialize as (v: unknown) => Buffer,
        m.responseDeserialize as (b: Buffer) => unknown,
        { kind: "vote", payload: Buffer.from("{}"), required: 1 },
        new grpc.Metadata(),
        { deadline: Date.now() + 2_000 },
        (e) => resolve(e),
      ),
    );
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    // wanted 3,005 = the 5 ms transit (deadlineReserveMs) + no overhead seen yet + the loop's 3,000,
    // capped at the whole time left
    expect(err?.details).toMatch(
      /^deadline: got ([\d.]+) \(from ms left on arrival at node coord\), expected more than the \1 ms reply reserve kept \(capped; wanted 3005 = 5 transit \+ 0 overhead \(largest seen\) \+ 3000 event-loop lateness\)$/,
    );
    expect(started).toBe(0);
  });
});
