import type { Baseline, Migration } from "./sql-schema";

/** The item child's SQLite schema: numbered migrations that only grow. */
export const MIGRATIONS: readonly Migration[] = [
  {
    id: 1,
    sql: `
      CREATE TABLE edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
        seq INTEGER NOT NULL, PRIMARY KEY (user, counter)) WITHOUT ROWID;
      CREATE TABLE meta (key TEXT PRIMARY KEY, value);
    `,
  },
  // The emitter's outbox (emitter.ts).
  {
    id: 2,
    sql: `CREATE TABLE emit_edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
            seq INTEGER NOT NULL, PRIMARY KEY (user, counter)) WITHOUT ROWID;
          CREATE TABLE emit_meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);`,
  },
  {
    id: 3,
    // The child's state in one row (a commit rewrote six), and the newest
    // report the head acknowledged, so a woken child does not report again.
    sql: `
      CREATE TABLE state (
        id INTEGER PRIMARY KEY CHECK (id = 1), item TEXT, idx INTEGER NOT NULL, likes INTEGER NOT NULL,
        saves INTEGER NOT NULL, seq INTEGER NOT NULL, writes INTEGER NOT NULL, acked INTEGER NOT NULL
      );
      INSERT INTO state (id, item, idx, likes, saves, seq, writes, acked) SELECT 1, (SELECT value FROM meta WHERE key = 'item'),
        coalesce((SELECT value FROM meta WHERE key = 'index'), 0), coalesce((SELECT value FROM meta WHERE key = 'likes'), 0),
        coalesce((SELECT value FROM meta WHERE key = 'saves'), 0), coalesce((SELECT value FROM meta WHERE key = 'seq'), 0),
        coalesce((SELECT value FROM meta WHERE key = 'writes'), 0), 0;
      DROP TABLE meta;
    `,
  },
  // When each edge, and each edge waiting to be emitted, was asked for (its liked_at); 0 for edges stored before edges kept their time.
  { id: 4, sql: `
  ALTER TABLE edges ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
  ALTER TABLE emit_edges ADD COLUMN at INTEGER NOT NULL DEFAULT 0;
` },
  {
    id: 5,
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
    id: 6,
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
];

/** A new child's schema: what migrations 1 to 6 build, in one script (sql-schema.ts). */
export const BASELINE: Baseline = {
  through: 6,
  sql: `
    CREATE TABLE edges (user TEXT NOT NULL, counter TEXT NOT NULL, state INTEGER NOT NULL, inc INTEGER NOT NULL,
      seq INTEGER NOT NULL, at INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (user, counter)) WITHOUT ROWID;
    CREATE TABLE state (
      id INTEGER PRIMARY KEY CHECK (id = 1), item TEXT, idx INTEGER NOT NULL, likes INTEGER NOT NULL,
      saves INTEGER NOT NULL, seq INTEGER NOT NULL, writes INTEGER NOT NULL, acked INTEGER NOT NULL,
      emit_seq INTEGER NOT NULL DEFAULT 0, emit_acked_seq INTEGER NOT NULL DEFAULT 0, emit_edges TEXT NOT NULL DEFAULT '[]'
    );
    INSERT INTO state (id, item, idx, likes, saves, seq, writes, acked) VALUES (1, NULL, 0, 0, 0, 0, 0, 0);
  `,
};
