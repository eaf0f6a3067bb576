import type { Baseline, Migration } from "./sql-schema";

/** The item head's SQLite schema: numbered migrations that only grow. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (user, counter)) WITHOUT ROWID;
      CREATE TABLE counts (counter TEXT PRIMARY KEY, value INTEGER NOT NULL);
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
    `,
  },
  {
    id: 2,
    sql: `
      CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
      CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    `,
  },
  {
    id: 3,
    sql: `
      CREATE TABLE children (
        idx         INTEGER PRIMARY KEY,
        likes       INTEGER NOT NULL,
        saves       INTEGER NOT NULL,
        seq         INTEGER NOT NULL,
        writes      INTEGER NOT NULL,
        reported_at INTEGER NOT NULL
      );
    `,
  },
  {
    id: 4,
    // The emitter's outbox (emitter.ts): each edge's newest unacknowledged version, and the snapshot sequences.
    sql: `
      CREATE TABLE emit_edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (user, counter)) WITHOUT ROWID;
      CREATE TABLE emit_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
    `,
  },
  { id: 5, sql: "CREATE TABLE unique_viewers (id INTEGER PRIMARY KEY CHECK (id = 1), sketch BLOB NOT NULL);" },
  {
    id: 6,
    // Single-value state in one row (a commit rewrites one row, not one per
    // counter and setting), and the child each handed-over edge went to.
    sql: `
      ALTER TABLE edges ADD COLUMN moved INTEGER;
      CREATE TABLE state (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        likes INTEGER NOT NULL, saves INTEGER NOT NULL, views INTEGER NOT NULL, shares INTEGER NOT NULL,
        hot INTEGER NOT NULL, shards INTEGER NOT NULL, hot_since INTEGER NOT NULL, handing TEXT
      );
      INSERT INTO state (id, likes, saves, views, shares, hot, shards, hot_since, handing) SELECT 1,
        coalesce((SELECT value FROM counts WHERE counter = 'likes'), 0), coalesce((SELECT value FROM counts WHERE counter = 'saves'), 0),
        coalesce((SELECT value FROM counts WHERE counter = 'views'), 0), coalesce((SELECT value FROM counts WHERE counter = 'shares'), 0),
        coalesce((SELECT value FROM meta WHERE key = 'hot'), 0), coalesce((SELECT value FROM meta WHERE key = 'shards'), 0), 0, NULL;
      DROP TABLE counts;
      DROP TABLE meta;
    `,
  },
  // When each edge, and each edge waiting to be emitted, was asked for (its liked_at); 0 for edges stored before edges kept their time.
  { id: 7, sql: `
  ALTER TABLE edges ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE emit_edges ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
` },
  // The last recheck the head asked for (recheck.ts): what ends a large item's rechecks must outlive eviction.
  { id: 8, sql: "CREATE TABLE recheck (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL, seq INTEGER NOT NULL);" },
  // The head's own name (its item key): an alarm that wakes a head not in memory gets none from the runtime (ctx.id.name).
  { id: 9, sql: "CREATE TABLE identity (id INTEGER PRIMARY KEY CHECK (id = 1), item TEXT NOT NULL);" },
  {
    id: 10,
    // The emitter's outbox in one row (emitter.ts): a change and an
    // acknowledgement rewrite it once per commit instead of a row per edge.
    sql: `
      CREATE TABLE emission (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL, acked_seq INTEGER NOT NULL, edges TEXT NOT NULL);
      INSERT INTO emission (id, seq, acked_seq, edges) SELECT 1,
        coalesce((SELECT value FROM emit_meta WHERE key = 'seq'), 0), coalesce((SELECT value FROM emit_meta WHERE key = 'acked_seq'), 0),
        (SELECT json_group_array(json_array(user, counter, state, inc, seq, at)) FROM emit_edges)
        WHERE EXISTS (SELECT 1 FROM emit_meta) OR EXISTS (SELECT 1 FROM emit_edges);
      DROP TABLE emit_edges;
      DROP TABLE emit_meta;
    `,
  },
  {
    id: 11,
    // The emitter's outbox in the state row (lib/emission-outbox.ts): a commit that changes the counts and the
    // outbox writes one row, not two. What the emission row held moves over; no row means nothing was emitted yet.
    sql: `
      ALTER TABLE state ADD COLUMN emit_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE state ADD COLUMN emit_acked_seq INTEGER NOT NULL DEFAULT 0;
      ALTER TABLE state ADD COLUMN emit_edges TEXT NOT NULL DEFAULT '[]';
      UPDATE state SET emit_seq = coalesce((SELECT seq FROM emission), 0), emit_acked_seq = coalesce((SELECT acked_seq FROM emission), 0),
        emit_edges = coalesce((SELECT edges FROM emission), '[]');
      DROP TABLE emission;
    `,
  },
  // The earliest a hot item may cool, by the writes its head has seen: a head that starts again after a
  // restart knows none of them (its write rate is in memory), and would otherwise merge a busy item at once.
  { id: 12, sql: "ALTER TABLE state ADD COLUMN cools_at INTEGER NOT NULL DEFAULT 0;" },
];

/** A new head's schema: what migrations 1 to 12 build, in one script (sql-schema.ts). */
export const BASELINE: Baseline = {
  through: 12,
  sql: `
    CREATE TABLE edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
      seq INTEGER NOT NULL, moved INTEGER, at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (user, counter)) WITHOUT ROWID;
    CREATE TABLE idempotency_keys (key TEXT PRIMARY KEY, expires_at INTEGER NOT NULL) WITHOUT ROWID;
    CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
    CREATE TABLE children (
      idx         INTEGER PRIMARY KEY,
      likes       INTEGER NOT NULL,
      saves       INTEGER NOT NULL,
      seq         INTEGER NOT NULL,
      writes      INTEGER NOT NULL,
      reported_at INTEGER NOT NULL
    );
    CREATE TABLE unique_viewers (id INTEGER PRIMARY KEY CHECK (id = 1), sketch BLOB NOT NULL);
    CREATE TABLE state (
      id INTEGER PRIMARY KEY CHECK (id = 1),
      likes INTEGER NOT NULL, saves INTEGER NOT NULL, views INTEGER NOT NULL, shares INTEGER NOT NULL,
      hot INTEGER NOT NULL, shards INTEGER NOT NULL, hot_since INTEGER NOT NULL, handing TEXT,
      emit_seq INTEGER NOT NULL DEFAULT 0, emit_acked_seq INTEGER NOT NULL DEFAULT 0, emit_edges TEXT NOT NULL DEFAULT '[]',
      cools_at INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO state (id, likes, saves, views, shares, hot, shards, hot_since, handing) VALUES (1, 0, 0, 0, 0, 0, 0, 0, NULL);
    CREATE TABLE recheck (id INTEGER PRIMARY KEY CHECK (id = 1), at INTEGER NOT NULL, seq INTEGER NOT NULL);
    CREATE TABLE identity (id INTEGER PRIMARY KEY CHECK (id = 1), item TEXT NOT NULL);
  `,
};
