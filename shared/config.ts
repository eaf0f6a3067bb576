/** Reads a numeric `wrangler.toml` var (or `.dev.vars` override), falling back on bad values. */
export function numberVar(value: string | undefined, fallback: number): number {
  if (value === undefined || value.trim() === "") return fallback;
  const parsed = Number(value);
  return Number.isFinite(parsed) && parsed >= 0 ? parsed : fallback;
}
