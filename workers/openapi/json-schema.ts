import { z } from "zod";
import * as shared from "../../shared/schemas";

export type JsonSchema = Record<string, unknown>;

/**
 * Every zod schema exported from shared/schemas.ts, by its export name: those
 * become named components (`#/components/schemas/LikeResponse`), so generated
 * clients get the same type names as the code; any other schema is inlined.
 */
const NAMES = new Map<unknown, string>(
  Object.entries(shared)
    .filter(([, value]) => typeof value === "object" && value !== null && "_zod" in value)
    .map(([name, value]) => [value, name]),
);

/**
 * A zod schema as JSON Schema 2020-12 (OpenAPI 3.1's dialect). Requests are
 * described by what the API accepts (`input`: an id may be a safe JSON
 * integer), answers by what it sends (`output`: ids are always strings).
 */
export function toJsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _dialect, ...json } = z.toJSONSchema(schema, { target: "draft-2020-12", io, unrepresentable: "any" });
  return json;
}

/** Collects named schemas for `components.schemas` and hands out references to them. */
export class SchemaComponents {
  readonly schemas: Record<string, JsonSchema> = {};

  ref(schema: z.ZodType, io: "input" | "output"): JsonSchema {
    const json = toJsonSchema(schema, io);
    const name = NAMES.get(schema);
    if (name === undefined) return json;
    const known = this.schemas[name];
    if (known && JSON.stringify(known) !== JSON.stringify(json)) {
      throw new Error(`${name} is used both as a request and as a response and differs between them; give each its own schema.`);
    }
    this.schemas[name] = json;
    return { $ref: `#/components/schemas/${name}` };
  }
}
