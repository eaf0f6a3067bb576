import { z } from "zod";
import { ItemType } from "./counters";
import { U64Id } from "./ids";

/** Most edges one `POST /v1/admin/import` call carries (16 KiB of body holds about 120). */
export const MAX_IMPORT_BATCH = 100;

/** ISO-8601 with a zone, or milliseconds since the epoch; a time after now is refused (it would outrank live likes). */
const LikedAt = z
  .union([z.iso.datetime({ offset: true }).transform((text) => Date.parse(text)), z.number().int().positive().max(Number.MAX_SAFE_INTEGER)], {
    error: "must be an ISO-8601 time with a zone, or milliseconds since the epoch",
  })
  .refine((ms) => ms <= Date.now() + 60_000, "must not be in the future")
  .meta({ description: "When the user liked or unliked: ISO-8601 with a zone, or ms since the epoch", example: "2024-05-01T12:00:00Z" });

/** One like edge from another system, as a line of an import file or an entry of a batch. */
export const ImportEdge = z.object({
  user_id: U64Id,
  item_id: U64Id,
  item_type: ItemType,
  liked_at: LikedAt,
  kind: z.enum(["like", "unlike"], { error: "must be like or unlike" }).meta({ description: "The edge's target state: never a toggle" }),
});
export type ImportEdge = z.output<typeof ImportEdge>;

export const ImportRequest = z.object({ edges: z.array(ImportEdge).min(1).max(MAX_IMPORT_BATCH) });

export const ImportResponse = z.object({
  results: z
    .array(z.enum(["applied", "duplicate", "superseded", "barred"]))
    .meta({
      description:
        "One per edge, in order: applied, already so (duplicate), older than the user's newest action on the item (superseded), or not applied because the user was purged or deleted (barred)",
    }),
});
export type ImportResponse = z.infer<typeof ImportResponse>;

/** The columns of a CSV import file, in the order its header names them. */
const CSV_COLUMNS = ["user_id", "item_id", "item_type", "liked_at", "kind"] as const;

/**
 * One line of an import file as the object its schema checks, or why it is
 * not one. NDJSON lines are JSON objects; CSV lines follow the header's
 * columns (no quoting: every field is an id, a word or a time).
 */
export function lineFields(line: string, format: "ndjson" | "csv", header: readonly string[] = CSV_COLUMNS): unknown {
  if (format === "ndjson") {
    try {
      return JSON.parse(line) as unknown;
    } catch {
      return undefined;
    }
  }
  const cells = line.split(",").map((cell) => cell.trim());
  const fields: Record<string, unknown> = Object.fromEntries(header.map((name, i) => [name, cells[i]]));
  // A time of digits only is milliseconds, as in NDJSON.
  if (typeof fields.liked_at === "string" && /^[0-9]+$/.test(fields.liked_at)) fields.liked_at = Number(fields.liked_at);
  return fields;
}

/** The edge a line holds, or why it holds none. */
export function parseLine(line: string, format: "ndjson" | "csv", header?: readonly string[]): { edge: ImportEdge } | { refused: string } {
  const fields = lineFields(line, format, header);
  if (fields === undefined) return { refused: "not JSON" };
  const result = ImportEdge.safeParse(fields);
  if (result.success) return { edge: result.data };
  return { refused: result.error.issues.map((issue) => `${issue.path.join(".") || "line"}: ${issue.message}`).join("; ") };
}
