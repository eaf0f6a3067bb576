const SUFFIXES = [
  { value: 1_000_000_000_000n, suffix: "T" },
  { value: 1_000_000_000n, suffix: "B" },
  { value: 1_000_000n, suffix: "M" },
  { value: 1_000n, suffix: "K" },
] as const;

/**
 * The display form of a count: K, M, B, T with at most one decimal, rounded
 * down (a post at 999,999 likes must not show "1M"), trailing ".0" dropped.
 * Integer arithmetic only, so large counts are never rounded up by floats.
 */
export function formatCount(count: number): string {
  const whole = Math.max(0, Math.trunc(count));
  // Most counts have no suffix: shown as they are, without the BigInt arithmetic (a feed formats 50 counts).
  if (whole < 1_000) return String(whole);
  const n = BigInt(whole);
  for (const { value, suffix } of SUFFIXES) {
    if (n >= value) {
      const tenths = (n * 10n) / value;
      const units = tenths / 10n;
      const decimal = tenths % 10n;
      return decimal === 0n ? `${units}${suffix}` : `${units}.${decimal}${suffix}`;
    }
  }
  return n.toString();
}
