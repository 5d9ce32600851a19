/** JSON payloads and answers in `bytes` fields: empty bytes mean null. */
import { TailswarmError } from "../errors.js";

const EMPTY = Buffer.alloc(0);

/** Encodes a JSON-serialisable value; `undefined` and `null` become empty bytes. */
export function encodeJson(value: unknown, field: string): Buffer {
  if (value === undefined || value === null) return EMPTY;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `${field}: value is not JSON-serialisable (${(error as Error).message}), expected plain JSON data`,
      { cause: error },
    );
  }
  if (text === undefined) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `${field}: got a ${typeof value}, expected JSON-serialisable data`,
    );
  }
  return Buffer.from(text, "utf8");
}

/**
 * Decodes JSON bytes, checking the size first. Throws `INVALID_ARGUMENT` naming the field, the size
 * or the parse error, and the expectation.
 */
export function decodeJson(
  bytes: Buffer | Uint8Array | undefined,
  field: string,
  maxBytes = Infinity,
): unknown {
  if (bytes === undefined || bytes.length === 0) return null;
  if (bytes.length > maxBytes) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `${field}: ${bytes.length} bytes, expected at most ${maxBytes} bytes`,
    );
  }
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  try {
    return JSON.parse(buf.toString("utf8")) as unknown;
  } catch (error) {
    throw new TailswarmError(
      "INVALID_ARGUMENT",
      `${field}: malformed JSON (${(error as Error).message}), expected UTF-8 JSON`,
      { cause: error },
    );
  }
}
