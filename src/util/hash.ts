/** 32-bit FNV-1a over the UTF-16 code units of `text`: memory signatures, and RNG streams keyed by name. */
export function hash32(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}
