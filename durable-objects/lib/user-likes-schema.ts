import type { Baseline, Migration } from "./sql-schema";

/** The user object's SQLite schema: numbered migrations that only grow. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
      CREATE TABLE edges (
        item    TEXT    NOT NULL,
        counter TEXT    NOT NULL,
        state   INTEGER NOT NULL,
        inc     INTEGER NOT NULL,
        seq     INTEGER NOT NULL,
        PRIMARY KEY (item, counter)
      ) WITHOUT ROWID;
      CREATE TABLE outbox (
        id      INTEGER PRIMARY KEY,
        item    TEXT    NOT NULL,
        counter TEXT    NOT NULL,
        state   INTEGER NOT NULL,
        inc     INTEGER NOT NULL,
        seq     INTEGER NOT NULL
      );
      CREATE TABLE rate (name TEXT PRIMARY KEY, tat REAL NOT NULL);
    `,
  },
  {
    id: 2,
    // An edge's home: the item's head (-1) or child i of a hot item. Chosen
    // when the edge is created, changed only when the head refuses it.
    sql: "ALTER TABLE edges ADD COLUMN home INTEGER NOT NULL DEFAULT -1",
  },
  {
    id: 3,
    // The user, the version sequence and the rate limiter's buckets in one
    // row: a like rewrites one row of state instead of three or four.
    sql: `
      CREATE TABLE state (
        id   INTEGER PRIMARY KEY CHECK (id = 1),
        user TEXT,
        inc  INTEGER NOT NULL,
        seq  INTEGER NOT NULL,
        tats TEXT    NOT NULL
      );
      INSERT INTO state (id, user, inc, seq, tats)
        SELECT 1,
               (SELECT value FROM meta WHERE key = 'user'),
               coalesce((SELECT value FROM meta WHERE key = 'inc'), 1),
               coalesce((SELECT value FROM meta WHERE key = 'seq'), 0),
               coalesce((SELECT json_group_object(name, tat) FROM rate), '{}');
      DROP TABLE meta;
      DROP TABLE rate;
    `,
  },
  {
    id: 4,
    // When the user asked for each edge's state (its liked_at), carried by
    // the outbox to the item side; 0 for edges stored before edges kept their
    // time. The index serves the user's own likes, newest first.
    sql: `
      ALTER TABLE edges ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE outbox ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
      CREATE INDEX edges_by_time ON edges (counter, state, at, item);
    `,
  },
  // When the user last acted on each edge (the time asked, in ms), changed or
  // not: a request asked earlier changes nothing (I6).
  { id: 5, sql: "ALTER TABLE edges ADD COLUMN acted_at INTEGER NOT NULL DEFAULT 0" },
  // A deletion or purge of the user in progress or done, and its bar (lib/removal.ts).
  {
    id: 6,
    sql: `
  CREATE TABLE removal (
    id INTEGER PRIMARY KEY CHECK (id = 1), user TEXT NOT NULL, kind TEXT NOT NULL, phase TEXT NOT NULL,
    requested_at INTEGER NOT NULL, finished_at INTEGER, likes_removed INTEGER NOT NULL, saves_removed INTEGER NOT NULL,
    items_forgotten INTEGER NOT NULL, barred INTEGER NOT NULL, wipe_sent_at INTEGER NOT NULL
  );
`,
  },
  {
    id: 7,
    // The own-likes index holds current likes only: a like adds one entry and
    // an unlike removes it (no index row written), where the full index
    // rewrote an entry on every toggle, saves and unliked edges included.
    sql: `
      DROP INDEX edges_by_time;
      CREATE INDEX likes_by_time ON edges (at, item) WHERE counter = 'likes' AND state = 1;
    `,
  },
  {
    id: 8,
    // The outbox becomes a list of edges in the state row, which every change
    // rewrites anyway: a change no longer inserts a row and its delivery no
    // longer deletes one. What is sent is the edge row's newest state.
    sql: `
      ALTER TABLE state ADD COLUMN outbox TEXT NOT NULL DEFAULT '[]';
      UPDATE state SET outbox = (SELECT coalesce(json_group_array(json_array(item, counter)), '[]') FROM (SELECT DISTINCT item, counter FROM outbox));
      DROP TABLE outbox;
    `,
  },
];

/** A new user object's schema: what migrations 1 to 8 build, in one script (lib/sql-schema.ts). */
export const BASELINE: Baseline = {
  through: 8,
  sql: `
    CREATE TABLE edges (
      item     TEXT    NOT NULL,
      counter  TEXT    NOT NULL,
      state    INTEGER NOT NULL,
      inc      INTEGER NOT NULL,
      seq      INTEGER NOT NULL,
      home     INTEGER NOT NULL DEFAULT -1,
      at       INTEGER NOT NULL DEFAULT 0,
      acted_at INTEGER NOT NULL DEFAULT 0,
      PRIMARY KEY (item, counter)
    ) WITHOUT ROWID;
    CREATE TABLE state (
      id   INTEGER PRIMARY KEY CHECK (id = 1),
      user TEXT,
      inc  INTEGER NOT NULL,
      seq  INTEGER NOT NULL,
      tats TEXT    NOT NULL,
      outbox TEXT NOT NULL DEFAULT '[]'
    );
    INSERT INTO state (id, user, inc, seq, tats) VALUES (1, NULL, 1, 0, '{}');
    CREATE INDEX likes_by_time ON edges (at, item) WHERE counter = 'likes' AND state = 1;
    CREATE TABLE removal (
      id INTEGER PRIMARY KEY CHECK (id = 1), user TEXT NOT NULL, kind TEXT NOT NULL, phase TEXT NOT NULL,
      requested_at INTEGER NOT NULL, finished_at INTEGER, likes_removed INTEGER NOT NULL, saves_removed INTEGER NOT NULL,
      items_forgotten INTEGER NOT NULL, barred INTEGER NOT NULL, wipe_sent_at INTEGER NOT NULL
    );
  `,
};
