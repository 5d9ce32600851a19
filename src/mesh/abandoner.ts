/**
 * Client side of Abandon: branch ids to stop on one peer are batched per event-loop turn and written
 * on one long-lived `AbandonStream` per peer channel, so abandoning at any rate costs a few DATA
 * frames and never an RST_STREAM. When the stream is down, the batch goes as a unary `Abandon` call.
 */
import { Metadata } from "@grpc/grpc-js";
import type { Client, ClientDuplexStream } from "@grpc/grpc-js";
import { swarmService } from "./proto.js";
import type { AbandonReply__Output } from "./gen/tailswarm/v1/AbandonReply.js";
import type { AbandonRequest } from "./gen/tailswarm/v1/AbandonRequest.js";

export class Abandoner {
  readonly #client: Client;
  #stream: ClientDuplexStream<AbandonRequest, AbandonReply__Output> | undefined;
  #pending: string[] = [];
  #scheduled = false;
  #closed = false;
  /** Branch ids sent, and batches written (for tests and stats). */
  sent = 0;
  batches = 0;

  constructor(client: Client) {
    this.#client = client;
  }

  abandon(branchId: string): void {
    if (this.#closed) return;
    this.#pending.push(branchId);
    if (!this.#scheduled) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  close(): void {
    this.#closed = true;
    this.#stream?.end();
    this.#stream = undefined;
  }

  #flush(): void {
    this.#scheduled = false;
    const ids = this.#pending;
    this.#pending = [];
    if (ids.length === 0 || this.#closed) return;
    this.sent += ids.length;
    this.batches++;
    const stream = this.#open();
    // write() returning false only means buffered: backpressure delays the batch, it does not lose it.
    if (stream !== undefined) stream.write({ branchIds: ids });
    else this.#unary(ids);
  }

  #open(): ClientDuplexStream<AbandonRequest, AbandonReply__Output> | undefined {
    if (this.#stream !== undefined && !this.#stream.destroyed && this.#stream.writable) return this.#stream;
    const m = swarmService().AbandonStream;
    try {
      const s = this.#client.makeBidiStreamRequest(
        m.path,
        m.requestSerialize,
        m.responseDeserialize,
        new Metadata(),
        {},
      );
      const drop = (): void => {
        if (this.#stream === s) this.#stream = undefined;
      };
      s.on("data", () => {});
      s.on("error", drop);
      s.on("end", drop);
      s.on("status", drop);
      this.#stream = s;
      return s;
    } catch {
      return undefined;
    }
  }

  #unary(ids: string[]): void {
    const m = swarmService().Abandon;
    this.#client.makeUnaryRequest(
      m.path,
      m.requestSerialize,
      m.responseDeserialize,
      { branchIds: ids },
      new Metadata(),
      { deadline: Date.now() + 5_000 },
      () => {},
    );
  }
}
