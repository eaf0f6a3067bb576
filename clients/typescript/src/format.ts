const SUFFIXES = [
  [1_000_000_000_000n, "T"],
  [1_000_000_000n, "B"],
  [1_000_000n, "M"],
  [1_000n, "K"],
] as const;

/**
 * A count's display form, the same rule as the API's `count_formatted`: K, M,
 * B, T with at most one decimal, rounded down, trailing ".0" dropped. Integer
 * arithmetic, so 999,999 never shows as "1M".
 */
export function formatCount(count: number): string {
  const n = BigInt(Math.max(0, Math.trunc(count)));
  for (const [value, suffix] of SUFFIXES) {
    if (n >= value) {
      const tenths = (n * 10n) / value;
      const decimal = tenths % 10n;
      return `${tenths / 10n}${decimal === 0n ? "" : `.${decimal}`}${suffix}`;
    }
  }
  return n.toString();
}
