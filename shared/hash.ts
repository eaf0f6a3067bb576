/**
 * FNV-1a, 32 bits, over a string's UTF-16 code units: small, fast and the
 * same in every runtime, for placing keys on a fixed number of homes.
 * WARNING: never change it: stored data sits where it says (hot items'
 * children, count databases).
 */
export function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}
