/** JSON payloads and answers in `bytes` fields: empty bytes mean null. */
import { invalid } from "../errors.js";

const EMPTY = Buffer.alloc(0);

/** Encodes a JSON-serialisable value; `undefined` and `null` become empty bytes. */
export function encodeJson(value: unknown, field: string): Buffer {
  if (value === undefined || value === null) return EMPTY;
  let text: string | undefined;
  try {
    text = JSON.stringify(value);
  } catch (error) {
    throw invalid(field, value, `plain JSON data (${(error as Error).message})`, { cause: error });
  }
  if (text === undefined) {
    throw invalid(field, value, "JSON-serialisable data");
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
    throw invalid(`${field} size`, bytes.length, `at most ${maxBytes} bytes`);
  }
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  try {
    return JSON.parse(buf.toString("utf8")) as unknown;
  } catch (error) {
    throw invalid(field, buf.toString("utf8", 0, 256), `UTF-8 JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
}
