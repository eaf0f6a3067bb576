import { abortAllDurableObjects, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BASELINE as ITEM_BASELINE, MIGRATIONS as ITEM_MIGRATIONS } from "../../durable-objects/lib/item-counter-schema";
import { BASELINE as SHARD_BASELINE, MIGRATIONS as SHARD_MIGRATIONS } from "../../durable-objects/lib/item-shard-schema";
import { BASELINE as USER_BASELINE, MIGRATIONS as USER_MIGRATIONS } from "../../durable-objects/lib/user-likes-schema";
import { checkMigrations, SqlSchema, type Baseline, type Migration } from "../../durable-objects/lib/sql-schema";
import { OWN_LIKES_PAGE } from "../../durable-objects/lib/own-likes";
import { shardObjectName } from "../../shared/object-names";
import { call, freshId, json, like, tokenFor } from "./helpers";

const userStub = (id: string) => env.USER_LIKES.get(env.USER_LIKES.idFromName(`u:${id}`));
const itemStub = (key: string) => env.ITEM_COUNTER.get(env.ITEM_COUNTER.idFromName(key));
const upTo = (migrations: readonly Migration[], id: number) => migrations.filter((m) => m.id <= id);

/** Everything a schema is made of, by name: columns, keys, constraints, indexes and rows (the record of migrations aside: a baseline is recorded as one id). */
function schemaOf(sql: SqlStorage) {
  const objects = sql
    .exec<{ type: string; name: string; tbl_name: string; sql: string | null }>(
      "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT GLOB 'sqlite_*' AND name NOT GLOB '_cf_*' ORDER BY type, name",
    )
    .toArray();
  return objects.map(({ type, name, tbl_name, sql: text }) => {
    if (type === "index") {
      const columns = sql.exec(`SELECT name FROM pragma_index_info('${name}') ORDER BY seqno`).toArray();
      return { type, name, table: tbl_name, columns, where: text?.replace(/\s+/g, " ").match(/ WHERE (.*)$/i)?.[1] ?? null };
    }
    const rows = name === "_migrations" ? [] : sql.exec(`SELECT * FROM "${name}"`).toArray();
    return {
      type,
      name,
      columns: sql.exec(`SELECT name, type, "notnull", dflt_value, pk FROM pragma_table_info('${name}') ORDER BY cid`).toArray(),
      withoutRowid: /WITHOUT ROWID/i.test(text ?? ""),
      checks: (text?.match(/CHECK\s*\([^)]*\)/gi) ?? []).map((check) => check.replace(/\s+/g, " ")),
      rows,
    };
  });
}

/** Builds a schema in a fresh object and reports what it built and how many rows that wrote. */
async function build(stub: DurableObjectStub, migrations: readonly Migration[], baseline?: Baseline) {
  return await runInDurableObject(stub, (_, state) => {
    const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
    const storage = {
      sql: { exec: (query: string, ...bindings: unknown[]) => { const cursor = state.storage.sql.exec(query, ...bindings); cursors.push(cursor); return cursor; } } as SqlStorage,
      transactionSync: <T>(fn: () => T) => state.storage.transactionSync(fn),
    };
    new SqlSchema(storage, migrations, baseline).ensure();
    return { schema: schemaOf(state.storage.sql), rowsWritten: cursors.reduce((n, c) => n + c.rowsWritten, 0) };
  });
}

describe("object migrations", () => {
  it("refuses duplicate ids, ids out of order and ids that are not positive integers", () => {
    expect(() => checkMigrations([{ id: 1, sql: "" }, { id: 1, sql: "" }])).toThrow(/twice/);
    expect(() => checkMigrations([{ id: 2, sql: "" }, { id: 1, sql: "" }])).toThrow(/after/);
    expect(() => checkMigrations([{ id: 0, sql: "" }])).toThrow(/positive/);
    expect(() => checkMigrations([{ id: 1.5, sql: "" }])).toThrow(/positive/);
    expect(() => checkMigrations([{ id: 1, sql: "" }, { id: 3, sql: "" }])).not.toThrow();
  });

  it.each([
    ["user", () => userStub(freshId()), USER_MIGRATIONS, USER_BASELINE],
    ["item head", () => itemStub(`post:${freshId()}`), ITEM_MIGRATIONS, ITEM_BASELINE],
    ["item child", () => env.ITEM_SHARD.get(env.ITEM_SHARD.idFromName(shardObjectName(`post:${freshId()}`, 0))), SHARD_MIGRATIONS, SHARD_BASELINE],
  ] as const)("gives a new %s object, in one script, the schema and rows its migrations build, for fewer rows written", async (_, stub, migrations, baseline) => {
    const chained = await build(stub(), migrations);
    const fromBaseline = await build(stub(), migrations, baseline);
    expect(fromBaseline.schema).toEqual(chained.schema);
    expect(fromBaseline.schema.length).toBeGreaterThanOrEqual(3);
    expect(fromBaseline.rowsWritten).toBeLessThan(chained.rowsWritten);
  });

  it("applies the migrations after a baseline, and never the baseline to an object that has a schema", async () => {
    const { through } = USER_BASELINE;
    const later = [...upTo(USER_MIGRATIONS, through), { id: through + 1, sql: "ALTER TABLE state ADD COLUMN extra INTEGER NOT NULL DEFAULT 5" }];
    const built = await build(userStub(freshId()), later, USER_BASELINE);
    const state = built.schema.find((o) => o.name === "state")!;
    expect(state.rows).toEqual([{ id: 1, user: null, inc: 1, seq: 0, tats: "{}", outbox: "[]", extra: 5 }]);
    const user = userStub(freshId());
    await build(user, USER_MIGRATIONS, USER_BASELINE);
    await runInDurableObject(user, (_, object) => {
      new SqlSchema(object.storage, later, USER_BASELINE).ensure();
      expect(object.storage.sql.exec("SELECT id FROM _migrations ORDER BY id").toArray()).toEqual([{ id: through }, { id: through + 1 }]);
      expect(object.storage.sql.exec("SELECT extra FROM state").one().extra).toBe(5);
    });
    await runInDurableObject(userStub(freshId()), (_, object) => {
      new SqlSchema(object.storage, upTo(USER_MIGRATIONS, 2)).ensure();
      object.storage.sql.exec("INSERT INTO meta (key, value) VALUES ('seq', 4)");
      new SqlSchema(object.storage, USER_MIGRATIONS, USER_BASELINE).ensure();
      expect(object.storage.sql.exec("SELECT seq FROM state").one().seq).toBe(4);
    });
    expect(() => new SqlSchema({ sql: {} as SqlStorage, transactionSync: (fn) => fn() }, upTo(USER_MIGRATIONS, 2), USER_BASELINE)).toThrow(/names no migration/);
  });

  it("pages a user's own likes through the index of current likes, which a save or an unliked edge never enters", async () => {
    const user = freshId();
    const token = await tokenFor(user);
    const [kept, dropped] = [freshId(), freshId()];
    for (const item of [kept, dropped]) expect((await json(await like(token, item))).status).toBe("liked");
    expect((await call("DELETE", "/v1/like", { token, body: { item_type: "post", item_id: dropped } })).status).toBe(200);
    expect((await call("POST", "/v1/save", { token, body: { item_type: "post", item_id: dropped } })).status).toBe(200);
    await runInDurableObject(userStub(user), (_, state) => {
      const sql = state.storage.sql;
      const plan = sql.exec<{ detail: string }>(`EXPLAIN QUERY PLAN ${OWN_LIKES_PAGE}`, 0, 0, "", "", "", 5).toArray();
      expect(plan.map((step) => step.detail).join(" ")).toMatch(/likes_by_time/);
      expect(sql.exec("SELECT count(*) AS n FROM edges INDEXED BY likes_by_time WHERE counter = 'likes' AND state = 1").one().n).toBe(1);
    });
    const page = await json(await call("GET", "/v1/me/likes", { token }));
    expect(page.likes.map((l: { item_id: string }) => l.item_id)).toEqual([kept]);
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

  it("upgrades an item head created at migration 9 with edges waiting to be emitted: the outbox in its state row, then sent and acknowledged", async () => {
    const key = `post:${freshId()}`;
    await runInDurableObject(itemStub(key), (_, state) => {
      new SqlSchema(state.storage, upTo(ITEM_MIGRATIONS, 9)).ensure();
      const sql = state.storage.sql;
      sql.exec("UPDATE state SET likes = 2");
      sql.exec("INSERT INTO edges (user, counter, state, inc, seq, at) VALUES ('1', 'likes', 1, 1, 1, 5), ('2', 'likes', 1, 1, 4, 6)");
      sql.exec("INSERT INTO emit_edges (user, counter, state, inc, seq, at) VALUES ('1', 'likes', 1, 1, 1, 5), ('2', 'likes', 1, 1, 4, 6)");
      sql.exec("INSERT INTO emit_meta (key, value) VALUES ('seq', 3), ('acked_seq', 1)");
    });
    await abortAllDurableObjects();
    const upgraded = await runInDurableObject(itemStub(key), (_, state) => ({
      row: state.storage.sql
        .exec<{ seq: number; acked_seq: number; edges: string }>("SELECT emit_seq AS seq, emit_acked_seq AS acked_seq, emit_edges AS edges FROM state")
        .one(),
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name IN ('emit_edges', 'emit_meta', 'emission')").toArray(),
    }));
    expect({ ...upgraded.row, edges: JSON.parse(upgraded.row.edges) }).toEqual({
      seq: 3,
      acked_seq: 1,
      edges: expect.arrayContaining([["1", "likes", 1, 1, 1, 5], ["2", "likes", 1, 1, 4, 6]]),
    });
    expect(upgraded.tables).toEqual([]);
    // What the old tables held is sent from the row, and the acknowledgement empties it.
    await expect
      .poll(async () => (({ seq, ackedSeq, pendingEdges }) => ({ seq, ackedSeq, pendingEdges }))(await itemStub(key).emissionState()), { timeout: 20_000, interval: 200 })
      .toEqual({ seq: 3, ackedSeq: 3, pendingEdges: 0 });
  });

  it.each([
    ["item head", () => itemStub(`post:${freshId()}`), ITEM_MIGRATIONS, 10],
    ["item child", () => env.ITEM_SHARD.get(env.ITEM_SHARD.idFromName(shardObjectName(`post:${freshId()}`, 0))), SHARD_MIGRATIONS, 5],
  ] as const)("moves an %s's emission row into its state row, keeping the counts and what waits for acknowledgement", async (_, stub, migrations, through) => {
    const object = stub();
    const edges = JSON.stringify([["1", "likes", 1, 1, 1, 5], ["2", "likes", 0, 1, 4, 6]]);
    const read = () =>
      runInDurableObject(object, (_, state) => {
        const sql = state.storage.sql;
        return {
          row: sql.exec<{ likes: number; seq: number; acked: number; edges: string }>(
            "SELECT likes, emit_seq AS seq, emit_acked_seq AS acked, emit_edges AS edges FROM state",
          ).one(),
          tables: sql.exec("SELECT name FROM sqlite_master WHERE name = 'emission'").toArray(),
        };
      });
    await runInDurableObject(object, (_, state) => {
      new SqlSchema(state.storage, upTo(migrations, through)).ensure();
      state.storage.sql.exec("UPDATE state SET likes = 7");
      state.storage.sql.exec("INSERT INTO emission (id, seq, acked_seq, edges) VALUES (1, 9, 4, ?)", edges);
      new SqlSchema(state.storage, migrations).ensure();
    });
    expect(await read()).toEqual({ row: { likes: 7, seq: 9, acked: 4, edges }, tables: [] });
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

  it("upgrades a user object created at migration 7 with changes in its outbox table: the list in its state row, then delivered", async () => {
    const user = freshId();
    const [twice, once] = [`post:${freshId()}`, `post:${freshId()}`];
    await runInDurableObject(userStub(user), (_, state) => {
      new SqlSchema(state.storage, upTo(USER_MIGRATIONS, 7)).ensure();
      const sql = state.storage.sql;
      sql.exec("UPDATE state SET user = ?, seq = 3", user);
      // Liked, unliked and liked again before any delivery: three rows, one edge, whose newest state is what goes out.
      sql.exec("INSERT INTO edges (item, counter, state, inc, seq, home, at) VALUES (?, 'likes', 1, 1, 3, -1, 3), (?, 'likes', 1, 1, 1, -1, 1)", twice, once);
      sql.exec(
        "INSERT INTO outbox (item, counter, state, inc, seq, at) VALUES (?, 'likes', 1, 1, 1, 1), (?, 'likes', 1, 1, 2, 2), (?, 'likes', 0, 1, 2, 2), (?, 'likes', 1, 1, 3, 3)",
        once,
        twice,
        twice,
        twice,
      );
    });
    await abortAllDurableObjects();
    const upgraded = await runInDurableObject(userStub(user), async (_, state) => ({
      outbox: JSON.parse(state.storage.sql.exec<{ outbox: string }>("SELECT outbox FROM state").one().outbox),
      tables: state.storage.sql.exec("SELECT name FROM sqlite_master WHERE name = 'outbox'").toArray(),
      alarm: await state.storage.getAlarm(),
    }));
    expect(upgraded.outbox).toEqual(expect.arrayContaining([[twice, "likes"], [once, "likes"]]));
    expect(upgraded.outbox).toHaveLength(2);
    expect(upgraded.tables).toEqual([]);
    // The upgraded object keeps an alarm for what it has to deliver.
    expect(upgraded.alarm).not.toBeNull();
    expect(await runDurableObjectAlarm(userStub(user))).toBe(true);
    for (const key of [twice, once]) expect((await itemStub(key).read()).counts.likes).toBe(1);
    expect(await userStub(user).pendingDeliveries()).toBe(0);
  });
});
