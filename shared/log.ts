export type LogLevel = "debug" | "info" | "warn" | "error";

/**
 * One JSON line per event, always with a level and an event name (and the
 * request id, where the caller has one): what `wrangler tail` and Workers
 * Logs index and filter on. Never pass an error's stack: only `String(error)`.
 */
export function log(level: LogLevel, event: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, event, ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}
