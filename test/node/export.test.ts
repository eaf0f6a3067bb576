import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Alternator } from "../../workers/stores/alternator";
import { currentSalt, exportEdges, pseudonym, type ExportedEdge, type StoreAccess } from "../../scripts/lib/export";

type Server = { listen(port: number, host: string, done: () => void): void; address(): AddressInfo; close(done: () => void): void };
const dynalite = createRequire(import.meta.url)("dynalite") as (options: Record<string, number>) => Server;
const root = resolve(import.meta.dirname, "../..");

const PREFIX = "export_";
const DECEMBER = Date.parse("2026-12-10T12:00:00Z");
const JANUARY = Date.parse("2027-01-03T12:00:00Z");
// Long enough that none can turn up by chance inside a 32-digit hex pseudonym.
const USERS = ["4242424242424", "1700000000017", "900000000000000001"];

let server: Server;
let store: StoreAccess;
let dir: string;

/** The central store's user-to-items table, as the pipeline writes it: liked edges with liked_at, an unliked one without. */
async function seed(db: Alternator): Promise<void> {
  await db.call("CreateTable", {
    TableName: `${PREFIX}user_likes`,
    KeySchema: [
      { AttributeName: "user", KeyType: "HASH" },
      { AttributeName: "item", KeyType: "RANGE" },
    ],
    AttributeDefinitions: [
      { AttributeName: "user", AttributeType: "S" },
      { AttributeName: "item", AttributeType: "S" },
    ],
    BillingMode: "PAY_PER_REQUEST",
  });
  const put = (user: string, item: string, state: number, likedAt?: number) =>
    db.call("PutItem", {
      TableName: `${PREFIX}user_likes`,
      Item: { user: { S: user }, item: { S: item }, state: { N: String(state) }, version: { N: "1" }, ...(likedAt ? { liked_at: { N: String(likedAt) } } : {}) },
    });
  await put(USERS[0]!, "post:456:likes", 1, Date.parse("2026-11-05T08:00:00Z"));
  await put(USERS[0]!, "reel:9:likes", 1, Date.parse("2026-11-20T08:00:00Z"));
  await put(USERS[1]!, "post:456:likes", 1, Date.parse("2026-11-06T09:30:00Z"));
  await put(USERS[2]!, "post:456:saves", 1, Date.parse("2026-11-07T10:00:00Z"));
  // Outside the range, and undone: neither is exported.
  await put(USERS[1]!, "post:457:likes", 1, Date.parse("2026-12-02T00:00:00Z"));
  await put(USERS[2]!, "post:458:likes", 0);
}

beforeAll(async () => {
  server = dynalite({ createTableMs: 0 });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  store = { endpoint: `http://127.0.0.1:${server.address().port}`, prefix: PREFIX, region: "us-east-1", accessKeyId: "t", secretAccessKey: "t" };
  await seed(new Alternator({ ...store, timeoutMs: 5_000 }));
  dir = mkdtempSync(join(tmpdir(), "plaudit-export-"));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await new Promise<void>((done) => server.close(() => done()));
});

const NOVEMBER = { from: Date.parse("2026-11-01T00:00:00Z"), to: Date.parse("2026-12-01T00:00:00Z") };

async function exported(salt: string): Promise<ExportedEdge[]> {
  const edges: ExportedEdge[] = [];
  await exportEdges(store, NOVEMBER, salt, (edge) => edges.push(edge));
  return edges.sort((a, b) => a.liked_at.localeCompare(b.liked_at));
}

describe("the pseudonymized export", () => {
  it("exports the liked edges of the range with no raw user id, pseudonyms stable within a salt period and different across periods", async () => {
    const salts = join(dir, "salts.json");
    const first = currentSalt(salts, DECEMBER);
    const again = currentSalt(salts, DECEMBER + 86_400_000);
    expect(again).toEqual({ period: "2026-12", salt: first.salt, destroyed: [] });

    const december = await exported(first.salt);
    expect(december.map(({ item_type, item_id, counter, liked_at }) => [item_type, item_id, counter, liked_at])).toEqual([
      ["post", "456", "likes", "2026-11-05T08:00:00.000Z"],
      ["post", "456", "likes", "2026-11-06T09:30:00.000Z"],
      ["post", "456", "saves", "2026-11-07T10:00:00.000Z"],
      ["reel", "9", "likes", "2026-11-20T08:00:00.000Z"],
    ]);
    const text = JSON.stringify(december);
    for (const user of USERS) expect(text).not.toContain(user);
    for (const edge of december) expect(edge.user).toMatch(/^u_[0-9a-f]{32}$/);
    // One user, one pseudonym within the period; two users, two.
    expect(december[0]!.user).toBe(december[3]!.user);
    expect(new Set(december.map((e) => e.user)).size).toBe(3);
    expect((await exported(again.salt)).map((e) => e.user)).toEqual(december.map((e) => e.user));

    const next = currentSalt(salts, JANUARY);
    expect(next.period).toBe("2027-01");
    expect(next.destroyed).toEqual(["2026-12"]);
    expect(Object.keys(JSON.parse(readFileSync(salts, "utf8")))).toEqual(["2027-01"]);
    const january = await exported(next.salt);
    for (const [i, edge] of january.entries()) expect(edge.user).not.toBe(december[i]!.user);
    expect(pseudonym(USERS[0]!, next.salt)).toBe(january[0]!.user);
  });

  it("runs as npm run export, writing NDJSON and refusing a bad range", async () => {
    const out = join(dir, "edges.ndjson");
    const run = (args: string[]) =>
      promisify(execFile)(process.execPath, ["--import", "tsx", "scripts/export.ts", ...args], { cwd: root, env: { ...process.env, ALTERNATOR_ENDPOINT: store.endpoint } });
    const { stderr } = await run(["--from", "2026-11-01", "--to", "2026-12-01", "--prefix", PREFIX, "--out", out, "--salts", join(dir, "cli-salts.json")]);
    expect(stderr).toContain("4 edges exported");
    const lines = readFileSync(out, "utf8").trim().split("\n").map((l) => JSON.parse(l) as ExportedEdge);
    expect(lines).toHaveLength(4);
    for (const line of lines) expect(line.user).toMatch(/^u_[0-9a-f]{32}$/);
    await expect(run(["--from", "2026-12-01", "--to", "2026-11-01"])).rejects.toMatchObject({ code: 2 });
  });
});
