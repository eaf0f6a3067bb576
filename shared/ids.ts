import { z } from "zod";

/** The largest unsigned 64-bit integer: user and item ids go up to here. */
export const MAX_U64 = 18446744073709551615n;

const DIGITS_NO_LEADING_ZERO = /^(0|[1-9][0-9]{0,19})$/;

/** What a JSON Schema can say of a canonical id (the range check past 20 digits is the refine's). */
const ID_PATTERN = { pattern: DIGITS_NO_LEADING_ZERO.source };

/**
 * True for the one canonical spelling of a uint64: digits only, no leading
 * zeros, no sign, no whitespace, at most 2^64-1. Ids are object names and
 * storage keys, so "007" and "7" must never both be accepted: they would reach
 * two objects for one user or item.
 */
export function isCanonicalU64(value: string): boolean {
  return DIGITS_NO_LEADING_ZERO.test(value) && (value.length < 20 || BigInt(value) <= MAX_U64);
}

const ID_MESSAGE =
  "must be an unsigned 64-bit integer as a canonical decimal string (digits only, no leading zeros, at most 18446744073709551615) or a safe JSON integer";

/**
 * A uint64 id as it may arrive in JSON: a canonical decimal string, or a JSON
 * number that is a safe integer (converted to the same canonical string).
 * Output is always the canonical string.
 */
export const U64Id = z
  .union(
    [
      z.string().refine(isCanonicalU64).meta(ID_PATTERN),
      z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER).transform(String),
    ],
    { error: ID_MESSAGE },
  )
  .meta({ description: "Unsigned 64-bit integer id as a canonical decimal string", example: "456" });

/**
 * An id as U64Id takes it, without zod: its canonical string, or undefined
 * when U64Id would refuse it. Kept beside the schema so the two change
 * together (test/node/counts-request.test.ts checks that they agree).
 */
export function u64IdOf(value: unknown): string | undefined {
  if (typeof value === "string") return isCanonicalU64(value) ? value : undefined;
  if (typeof value === "number" && Number.isInteger(value) && value >= 0 && value <= Number.MAX_SAFE_INTEGER) return String(value);
  return undefined;
}

/** A uint64 id in a URL (path or query): always text, so only the string form. */
export const U64IdText = z
  .string({ error: ID_MESSAGE })
  .refine(isCanonicalU64, { error: ID_MESSAGE })
  .meta({ ...ID_PATTERN, description: "Unsigned 64-bit integer id as a canonical decimal string", example: "456" });
