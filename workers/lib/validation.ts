import type { Context } from "hono";
import type { z } from "zod";
import { ApiError, invalid, type ErrorDetail } from "./errors";

/** Request bodies larger than this are refused with 413 before parsing. */
export const MAX_BODY_BYTES = 16 * 1024;

function details(error: z.ZodError): ErrorDetail[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
}

function parse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.output<S> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalid(`The ${what} is invalid.`, details(result.error));
  return result.data;
}

async function readCapped(request: Request): Promise<Uint8Array> {
  const length = request.headers.get("content-length");
  const declared = Number(length);
  if (Number.isFinite(declared) && overCap(declared)) throw tooLarge();
  if (!request.body) return new Uint8Array();
  // A body of a declared length within the cap is read whole in one native
  // call (a feed sends one on every read). Over HTTP the length frames the
  // body; a caller inside the runtime (a service binding) can send more than
  // it declares, so the length read is checked again. A body without one is
  // read chunk by chunk and cut at the cap.
  if (length !== null && Number.isInteger(declared) && declared >= 0) {
    const bytes = new Uint8Array(await request.arrayBuffer());
    if (overCap(bytes.byteLength)) throw tooLarge();
    return bytes;
  }
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (overCap(size)) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/** The one rule of the cap, for a body's declared length, its whole length, or what was read of it so far. */
const overCap = (bytes: number) => bytes > MAX_BODY_BYTES;

const tooLarge = () =>
  new ApiError(413, "payload_too_large", `The request body must be at most ${MAX_BODY_BYTES} bytes.`);

/** Stateless between whole-buffer decodes, so one per isolate serves every request. */
const UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false });

function isJsonMediaType(header: string | undefined): boolean {
  if (!header) return false;
  const type = header.split(";")[0]!.trim().toLowerCase();
  return type === "application/json" || /^application\/[a-z0-9.+-]+\+json$/.test(type);
}

/**
 * Reads and validates a JSON body in the order the API promises: size (413),
 * media type (415), JSON syntax and schema (400). `plain`, when given, is a
 * check without zod that answers exactly what the schema would for the bodies
 * it accepts and null for the others, which the schema then reads (and words
 * the errors of).
 */
export async function readJson<S extends z.ZodType>(c: Context, schema: S, plain?: (value: unknown) => z.output<S> | null): Promise<z.output<S>> {
  const bytes = await readCapped(c.req.raw);
  if (!isJsonMediaType(c.req.header("content-type"))) {
    throw new ApiError(415, "unsupported_media_type", "The request body must be application/json.");
  }
  let value: unknown;
  try {
    value = JSON.parse(UTF8.decode(bytes));
  } catch {
    throw invalid("The request body is not valid JSON.");
  }
  return plain?.(value) ?? parse(schema, value, "request body");
}

/** Validates the query string; a repeated parameter is invalid, not silently merged. */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  const query: Record<string, string | string[]> = {};
  for (const [key, values] of Object.entries(c.req.queries())) {
    query[key] = values.length === 1 ? values[0]! : values;
  }
  return parse(schema, query, "query string");
}

/** Validates path parameters, with the same error shape as bodies and queries. */
export function readParams<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parse(schema, c.req.param(), "path");
}
