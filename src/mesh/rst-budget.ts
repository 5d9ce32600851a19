/**
 * A token bucket for hard cancels (RST_STREAM) per connection. Node's HTTP/2 closes a connection
 * after ~1,000 RST_STREAMs in a burst with a ~33/s refill, failing every call on it; the transport
 * spends at most this budget on last-resort cancels and otherwise lets the call end by its deadline.
 */
export class RstBudget {
  readonly #burst: number;
  readonly #perMs: number;
  #tokens: number;
  #at: number;

  constructor(burst: number, perSecond: number, now: number) {
    this.#burst = Math.max(0, burst);
    this.#perMs = Math.max(0, perSecond) / 1000;
    this.#tokens = this.#burst;
    this.#at = now;
  }

  /** Takes one token if there is one. */
  take(now: number): boolean {
    this.#tokens = Math.min(this.#burst, this.#tokens + (now - this.#at) * this.#perMs);
    this.#at = now;
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }
}
