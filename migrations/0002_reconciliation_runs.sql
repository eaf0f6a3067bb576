-- One row per reconciliation run: how many items it compared, how many had
-- drifted (and were asked to re-emit), how many were only behind, and the
-- largest difference it saw between a store and its object.
CREATE TABLE IF NOT EXISTS reconciliation_runs (
  id             INTEGER PRIMARY KEY AUTOINCREMENT,
  started_at     INTEGER NOT NULL,
  finished_at    INTEGER NOT NULL,
  items_checked  INTEGER NOT NULL,
  items_repaired INTEGER NOT NULL,
  items_lagging  INTEGER NOT NULL,
  d1_drift       INTEGER NOT NULL,
  central_drift  INTEGER NOT NULL,
  max_difference INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS reconciliation_runs_started_at ON reconciliation_runs (started_at);
