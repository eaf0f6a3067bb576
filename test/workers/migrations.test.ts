import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MIGRATIONS as ITEM_MIGRATIONS } from "../../durable-objects/ItemCounter";
import { MIGRATIONS as USER_MIGRATIONS } from "../../durable-objects/UserLikes";
import { checkMigrations, SqlSchema, type Migration } from "../../durable-objects/lib/sql-schema";
import { call, freshId, json, like, tokenFor } from "./helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));
const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const upTo = (migrations: readonly Migration[], id: number) => migrations.filter((m) => m.id <= id);

describe("object migrations", () => {
  it("refuses duplicate ids, ids out of order and ids that are not positive integers", () => {
    expect(() => checkMigrations([{ id: 1, sql: "" }, { id: 1, sql: "" }])).toThrow(/twice/);
    expect(() => checkMigrations([{ id: 2, sql: "" }, { id: 1, sql: "" }])).toThrow(/after/);
    expect(() => checkMigrations([{ id: 0, sql: "" }])).toThrow(/positive/);
    expect(() => checkMigrations([{ id: 1.5, sql: "" }])).toThrow(/positive/);
    expect(() => checkMigrations([{ id: 1, sql: "" }, { id: 3, sql: "" }])).not.toThrow();
  });

  it("refuses a new migration numbered below the last one an object applied, instead of skipping it", async () => {
    await runInDurableObject(userStub(freshId()), (_, state) => {
      new SqlSchema(state.storage, [{ id: 1, sql: "CREATE TABLE a (x)" }, { id: 3, sql: "CREATE TABLE c (x)" }]).ensure();
      const late = [{ id: 1, sql: "CREATE TABLE a (x)" }, { id: 2, sql: "CREATE TABLE b (x)" }, { id: 3, sql: "CREATE TABLE c (x)" }];
      expect(() => new SqlSchema(state.storage, late)).toThrow(/older than the applied migration 3/);
      expect(state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'b'").toArray()).toEqual([]);
    });
  });

  it("upgrades a user object created at migration 2, with likes and limiter state in it, to one state row", async () => {
    const user = freshId();
    const [liked, other] = [freshId(), freshId()];
    await runInDurableObject(userStub(user), (_, state) => {
      new SqlSchema(state.storage, upTo(USER_MIGRATIONS, 2)).ensure();
      const sql = state.storage.sql;
      sql.exec("INSERT INTO meta (key, value) VALUES ('user', ?), ('seq', 7)", user);
      sql.exec("INSERT INTO rate (name, tat) VALUES ('likes:minute', 1), ('likes:day', 2)");
      sql.exec("INSERT INTO edges (item, counter, state, inc, seq, home) VALUES (?, 'likes', 1, 1, 7, -1)", `post:${liked}`);
    });
    await abortAllDurableObjects();
    await runInDurableObject(userStub(user), (_, state) => {
      const row = state.storage.sql.exec<{ user: string; inc: number; seq: number; tats: string }>("SELECT user, inc, seq, tats FROM state").one();
      expect({ ...row, tats: JSON.parse(row.tats) }).toEqual({ user, inc: 1, seq: 7, tats: { "likes:minute": 1, "likes:day": 2 } });
      const tables = state.storage.sql.exec<{ name: string }>("SELECT name FROM sqlite_master WHERE name IN ('meta', 'rate')").toArray();
      expect(tables).toEqual([]);
    });
    const token = await tokenFor(user);
    expect((await json(await like(token, liked))).status).toBe("already_liked");
    expect((await json(await like(token, other))).status).toBe("liked");
    await runInDurableObject(userStub(user), (_, state) => {
      expect(state.storage.sql.exec("SELECT seq FROM edges WHERE item = ?", `post:${other}`).one().seq).toBe(8);
    });
  });

  it("upgrades an item head created at migration 5, with counts, placement and edges in it, to one state row", async () => {
    const key = `post:${freshId()}`;
    await runInDurableObject(itemStub(key), (_, state) => {
      new SqlSchema(state.storage, upTo(ITEM_MIGRATIONS, 5)).ensure();
      const sql = state.storage.sql;
      sql.exec("INSERT INTO counts (counter, value) VALUES ('likes', 2), ('views', 40)");
      sql.exec("INSERT INTO meta (key, value) VALUES ('shards', 16)");
      sql.exec("INSERT INTO edges (user, counter, state, inc, seq) VALUES ('1', 'likes', 1, 1, 1), ('2', 'likes', 1, 1, 1)");
    });
    await abortAllDurableObjects();
    expect((await itemStub(key).read()).counts).toEqual({ likes: 2, saves: 0, views: 40, shares: 0 });
    expect(await itemStub(key).describe()).toMatchObject({ hot: false, shards: 16 });
    const result = await itemStub(key).apply([{ user: "1", counter: "likes", state: 0, inc: 1, seq: 2, at: 2 }]);
    expect(result).toMatchObject({ status: "applied", counts: { likes: 1, views: 40 } });
    await runInDurableObject(itemStub(key), (_, state) => {
      expect(state.storage.sql.exec("SELECT moved FROM edges WHERE user = '2'").one().moved).toBeNull();
    });
  });

  it("upgrades a user object created at migration 3: its old likes list with a null liked_at, after the ones that have a time", async () => {
    const user = freshId();
    const [old, fresh] = [freshId(), freshId()];
    await runInDurableObject(userStub(user), (_, state) => {
      new SqlSchema(state.storage, upTo(USER_MIGRATIONS, 3)).ensure();
      state.storage.sql.exec("UPDATE state SET user = ?, seq = 1", user);
      state.storage.sql.exec("INSERT INTO edges (item, counter, state, inc, seq, home) VALUES (?, 'likes', 1, 1, 1, -1)", `post:${old}`);
    });
    await abortAllDurableObjects();
    const token = await tokenFor(user);
    expect((await json(await like(token, fresh))).status).toBe("liked");
    const page = await json(await call("GET", "/v1/me/likes", { token }));
    expect(page.likes.map((l: { item_id: string; liked_at: string | null }) => [l.item_id, l.liked_at === null])).toEqual([
      [fresh, false],
      [old, true],
    ]);
  });
});
