-- Passes that fan out (docs/pipeline.md, "Passes over every item"): a
-- reconciliation pass or a rebuild, split into ranges that queue consumers
-- walk side by side. One row per pass, in DB.
CREATE TABLE IF NOT EXISTS passes (
  id               TEXT    PRIMARY KEY,
  kind             TEXT    NOT NULL,
  ranges           INTEGER NOT NULL,
  -- Ranges walked at once: range r, once done, hands over to range r + concurrency.
  concurrency      INTEGER NOT NULL,
  step_items       INTEGER NOT NULL,
  -- The pace a reconciliation pass keeps to end in RECONCILE_FULL_PASS_HOURS; 0: only the stores' limits.
  items_per_second REAL    NOT NULL,
  started_at       INTEGER NOT NULL,
  finished_at      INTEGER
);
CREATE INDEX IF NOT EXISTS passes_kind_started ON passes (kind, started_at);
-- One unfinished pass a kind: two overlapping cron runs cannot both start one.
CREATE UNIQUE INDEX IF NOT EXISTS passes_one_running ON passes (kind) WHERE finished_at IS NULL;

-- One row per range of a pass: the index rows of database `db` with a draw in
-- [lo, hi), the walk's cursor in them, what it visited and changed (repaired,
-- or written where the store lacked it), and `step`, the number of steps
-- committed: a step commits only where `step` is still the one it started
-- from, so two deliveries of one step never both count.
CREATE TABLE IF NOT EXISTS pass_ranges (
  pass       TEXT    NOT NULL,
  range_no   INTEGER NOT NULL,
  db         INTEGER NOT NULL,
  lo         INTEGER NOT NULL,
  hi         INTEGER NOT NULL,
  cursor     TEXT,
  step       INTEGER NOT NULL DEFAULT 0,
  visited    INTEGER NOT NULL DEFAULT 0,
  changed    INTEGER NOT NULL DEFAULT 0,
  done       INTEGER NOT NULL DEFAULT 0,
  touched_at INTEGER NOT NULL,
  PRIMARY KEY (pass, range_no)
) WITHOUT ROWID;

-- The walk the cron ran itself before passes fanned out.
DROP TABLE IF EXISTS reconciliation_sweep;
