import { Validator } from "@seriousme/openapi-schema-validator";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { openApiDocument } from "../../workers/openapi/document";

// These validators compile JSON Schemas to code at run time, which workerd forbids: they run here, in Node.

type Media = { schema: object; example?: unknown; examples?: Record<string, { value: unknown }> };
type Operation = { requestBody?: { content: Record<string, Media> }; responses: Record<string, { content?: Record<string, Media> }> };

async function resolved(): Promise<{ paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, object> } }> {
  const validator = new Validator();
  await validator.validate(structuredClone(openApiDocument()));
  return validator.resolveRefs() as never;
}

/** Every JSON example in the document with the schema it illustrates. */
function examples(doc: Awaited<ReturnType<typeof resolved>>): { where: string; schema: object; value: unknown }[] {
  const found: { where: string; schema: object; value: unknown }[] = [];
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(operations)) {
      const media: [string, Media | undefined][] = [
        ["request", op.requestBody?.content["application/json"]],
        ...Object.entries(op.responses).map(([status, r]): [string, Media | undefined] => [status, r.content?.["application/json"]]),
      ];
      for (const [what, m] of media) {
        if (!m) continue;
        const values = m.examples ? Object.values(m.examples).map((e) => e.value) : [m.example];
        for (const value of values) found.push({ where: `${method} ${path} ${what}`, schema: m.schema, value });
      }
    }
  }
  return found;
}

describe("the OpenAPI document", () => {
  it("validates against the OpenAPI 3.1 schema", async () => {
    const validator = new Validator();
    const result = await validator.validate(structuredClone(openApiDocument()));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("has every $ref resolve", async () => {
    expect(JSON.stringify(await resolved())).not.toContain('"$ref"');
  });

  it("has component schemas that are valid JSON Schema 2020-12", async () => {
    const ajv = new Ajv2020({ strict: false });
    for (const [name, schema] of Object.entries((await resolved()).components.schemas)) {
      expect(ajv.validateSchema(schema), `${name}: ${ajv.errorsText()}`).toBe(true);
    }
  });

  it("has every example match the JSON Schema it illustrates", async () => {
    const ajv = new Ajv2020({ strict: false, validateFormats: false });
    const all = examples(await resolved());
    expect(all.length).toBeGreaterThan(20);
    for (const { where, schema, value } of all) {
      const validate = ajv.compile(schema);
      expect(validate(value), `${where}: ${ajv.errorsText(validate.errors)}`).toBe(true);
    }
  });
});
