import { z } from "zod";
import { ItemType } from "./counters";

/** Most likes one `GET /v1/me/likes` page holds. */
export const MAX_OWN_LIKES_PAGE = 100;
const DEFAULT_OWN_LIKES_PAGE = 20;

/**
 * Where a page ends: the last like's time and item. Pages are ordered by
 * (liked_at, item) descending, so a like made while a client pages is newer
 * than any cursor and never shifts what the next page holds.
 */
export type OwnLikesPosition = { at: number; item: string };

const CURSOR_TEXT = /^(0|[1-9][0-9]{0,15})\.([a-z]+:(?:0|[1-9][0-9]{0,19}))$/;

/** Opaque to clients: base64url of `<liked_at ms>.<item key>`. */
export function encodeCursor({ at, item }: OwnLikesPosition): string {
  return btoa(`${at}.${item}`).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function decodeCursor(cursor: string): OwnLikesPosition | null {
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(cursor)) return null;
  let text: string;
  try {
    text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return null;
  }
  const match = CURSOR_TEXT.exec(text);
  return match ? { at: Number(match[1]), item: match[2]! } : null;
}

const PAGE_MESSAGE = `must be a whole number from 1 to ${MAX_OWN_LIKES_PAGE}`;

export const OwnLikesQuery = z.object({
  item_type: ItemType.optional().meta({ description: "Only likes of this item type; all types when absent" }),
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, PAGE_MESSAGE)
    .transform(Number)
    .refine((n) => n <= MAX_OWN_LIKES_PAGE, PAGE_MESSAGE)
    .optional()
    .transform((n) => n ?? DEFAULT_OWN_LIKES_PAGE)
    .meta({ description: `Likes per page; default ${DEFAULT_OWN_LIKES_PAGE}, at most ${MAX_OWN_LIKES_PAGE}` }),
  cursor: z
    .string()
    .transform((value, ctx) => {
      const position = decodeCursor(value);
      if (position === null) ctx.addIssue({ code: "custom", message: "must be a next_cursor this endpoint answered" });
      return position ?? z.NEVER;
    })
    .optional()
    .meta({ description: "The previous page's next_cursor; absent for the first page" }),
});

export const OwnLike = z.object({
  item_id: z.string(),
  item_type: ItemType,
  liked_at: z.iso.datetime().nullable().meta({ description: "When the user liked it; null for likes stored before likes kept their time" }),
  pending: z
    .literal(true)
    .optional()
    .meta({ description: "A like accepted as pending (202) and not yet applied, listed first on the first page; absent once it is applied" }),
});

export const OwnLikesResponse = z.object({
  likes: z.array(OwnLike).meta({
    description: "The caller's current likes, newest first; the first page begins with the likes still pending (202), and leaves out items whose unlike is pending",
  }),
  next_cursor: z.string().nullable().meta({ description: "Pass as cursor for the next page; null on the last page" }),
});
export type OwnLikesResponse = z.infer<typeof OwnLikesResponse>;
