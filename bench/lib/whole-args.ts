/**
 * Reads whole-number options of a bench script (parseArgs values): one that
 * is not a whole number of at least `min` ends the script with its usage,
 * exit code 2.
 */
export function wholeArgs(values: Record<string, unknown>, usage: string) {
  return (name: string, min: number): number => {
    const n = Number(values[name]);
    if (!Number.isInteger(n) || n < min) {
      console.error(`--${name} must be a whole number >= ${min}\n${usage}`);
      process.exit(2);
    }
    return n;
  };
}
