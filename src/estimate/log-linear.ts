/**
 * Log-linear buckets of an integer value (µs) in [0, 2^31), the layout both sliding windows share:
 * one bucket per value below 2^subBits, then 2^(subBits − 1) equal buckets per power of two, so a
 * bucket is at most 2^(1 − subBits) of its low edge wide. Index: b·2^(subBits − 1) + (v >> b) with
 * b = max(0, floor(log2 v) − (subBits − 1)).
 */

/** The bucket index of `v`. */
export function logLinearIndex(v: number, subBits: number): number {
  const b = Math.max(0, 32 - subBits - Math.clz32(v));
  return (b << (subBits - 1)) + (v >>> b);
}

/** The lowest value (µs) of bucket `i`. */
export function logLinearLow(i: number, subBits: number): number {
  const half = 1 << (subBits - 1);
  if (i < 2 * half) return i;
  const b = (i >>> (subBits - 1)) - 1;
  return (i - b * half) * Math.pow(2, b);
}

/** The width (µs) of bucket `i`. */
export function logLinearWidth(i: number, subBits: number): number {
  const half = 1 << (subBits - 1);
  return i < 2 * half ? 1 : Math.pow(2, (i >>> (subBits - 1)) - 1);
}
