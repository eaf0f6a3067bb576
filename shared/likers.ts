import { z } from "zod";
import { ItemType } from "./counters";
import { U64IdText } from "./ids";

/** Most likers one `GET /v1/likers` page holds. */
export const MAX_LIKERS_PAGE = 100;
const DEFAULT_LIKERS_PAGE = 50;

/**
 * Where a page ends: the last liker's time and id. Pages are ordered by
 * (liked_at, user) descending, so a like made while a client pages is newer
 * than every cursor and never shifts what the next page holds.
 */
export type LikersPosition = { at: number; user: string };

const CURSOR_TEXT = /^(0|[1-9][0-9]{0,15})\.(0|[1-9][0-9]{0,19})$/;

/** Opaque to clients: base64url of `<liked_at ms>.<user id>`. */
export function encodeLikersCursor({ at, user }: LikersPosition): string {
  return btoa(`${at}.${user}`).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function decodeLikersCursor(cursor: string): LikersPosition | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  try {
    const match = CURSOR_TEXT.exec(atob(cursor.replaceAll("-", "+").replaceAll("_", "/")));
    return match ? { at: Number(match[1]), user: match[2]! } : null;
  } catch {
    return null;
  }
}

const PAGE_MESSAGE = `must be a whole number from 1 to ${MAX_LIKERS_PAGE}`;

export const LikersQuery = z.object({
  item_id: U64IdText,
  item_type: ItemType,
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, PAGE_MESSAGE)
    .transform(Number)
    .refine((n) => n <= MAX_LIKERS_PAGE, PAGE_MESSAGE)
    .optional()
    .transform((n) => n ?? DEFAULT_LIKERS_PAGE)
    .meta({ description: `Likers per page; default ${DEFAULT_LIKERS_PAGE}, at most ${MAX_LIKERS_PAGE}` }),
  cursor: z
    .string()
    .transform((value, ctx) => {
      const position = decodeLikersCursor(value);
      if (position === null) ctx.addIssue({ code: "custom", message: "must be a next_cursor this endpoint answered" });
      return position ?? z.NEVER;
    })
    .optional()
    .meta({ description: "The previous page's next_cursor; absent for the first page" }),
});

export const Liker = z.object({
  user_id: z.string(),
  liked_at: z.iso.datetime().meta({ description: "When the user liked the item" }),
});

export const LikersResponse = z.object({
  likers: z.array(Liker).meta({ description: "Newest first" }),
  next_cursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
});
export type LikersResponse = z.infer<typeof LikersResponse>;
