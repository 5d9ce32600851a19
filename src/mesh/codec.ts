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
 * The deepest nesting of arrays and objects in JSON text (brackets inside strings do not count). A
 * byte scan: UTF-8 continuation bytes never equal an ASCII bracket, quote or backslash.
 */
export function jsonDepth(buf: Uint8Array): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < buf.length; i++) {
    const c = buf[i];
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > deepest) deepest = depth;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/**
 * Decodes JSON bytes, checking the size and the nesting depth first (a value nested deeper than
 * `maxDepth` would overflow the stack of whatever walks it later: `JSON.stringify`, a handler).
 * Throws `INVALID_ARGUMENT` naming the field, the size, depth or parse error, and the expectation.
 */
export function decodeJson(
  bytes: Buffer | Uint8Array | undefined,
  field: string,
  maxBytes = Infinity,
  maxDepth = Infinity,
): unknown {
  if (bytes === undefined || bytes.length === 0) return null;
  if (bytes.length > maxBytes) {
    throw invalid(`${field} size`, bytes.length, `at most ${maxBytes} bytes`);
  }
  const buf = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  // Nesting deeper than maxDepth needs more than 2 × maxDepth bytes: shorter texts skip the scan.
  if (buf.length > 2 * maxDepth) {
    const depth = jsonDepth(buf);
    if (depth > maxDepth) {
      throw invalid(`${field} depth`, depth, `at most ${maxDepth} nested arrays and objects`);
    }
  }
  try {
    return JSON.parse(buf.toString("utf8")) as unknown;
  } catch (error) {
    throw invalid(field, buf.toString("utf8", 0, 256), `UTF-8 JSON (${(error as Error).message})`, {
      cause: error,
    });
  }
}
