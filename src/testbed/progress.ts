/**
 * Progress on stderr: a redrawn bar on a TTY, a plain line every `plainEveryMs` otherwise (CI logs).
 */
export class Progress {
  readonly #tty: boolean;
  readonly #stream: NodeJS.WriteStream;
  readonly #plainEveryMs: number;
  #lastPlain = 0;
  #drawn = false;

  constructor(stream: NodeJS.WriteStream = process.stderr, plainEveryMs = 10_000) {
    this.#stream = stream;
    this.#tty = stream.isTTY === true;
    this.#plainEveryMs = plainEveryMs;
  }

  /** A line of its own (clears the bar first). */
  log(line: string): void {
    this.#clear();
    this.#stream.write(`${line}\n`);
  }

  update(label: string, done: number, total: number, detail: string): void {
    const frac = total > 0 ? Math.min(1, Math.max(0, done / total)) : 0;
    if (this.#tty) {
      const width = 30;
      const filled = Math.round(frac * width);
      const bar = `${"#".repeat(filled)}${".".repeat(width - filled)}`;
      this.#stream.write(`\r\x1b[2K${label} [${bar}] ${done.toFixed(1)}/${total.toFixed(0)} s  ${detail}`);
      this.#drawn = true;
      return;
    }
    const now = Date.now();
    if (now - this.#lastPlain >= this.#plainEveryMs) {
      this.#lastPlain = now;
      this.#stream.write(`${label} ${done.toFixed(1)}/${total.toFixed(0)} s  ${detail}\n`);
    }
  }

  done(): void {
    this.#clear();
  }

  #clear(): void {
    if (this.#tty && this.#drawn) {
      this.#stream.write("\r\x1b[2K");
      this.#drawn = false;
    }
  }
}
