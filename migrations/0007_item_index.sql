-- Every item ever counted, so reconciliation reaches items quiet for years,
-- not only the recently changed ones. An item's row sits in a database other
-- than the one holding its counts (when there are several), so an item whose
-- count row was lost is still found. `draw` is a hash of the item: walking
-- the index in draw order visits the items in an order unrelated to their
-- names or ages, so each run's share is a random sample and a pass reaches all.
CREATE TABLE IF NOT EXISTS item_index (
  draw INTEGER NOT NULL,
  item TEXT    NOT NULL,
  PRIMARY KEY (draw, item)
) WITHOUT ROWID;

-- Where the walk over the index stands (one row, in DB): the last draw
-- checked, when the current pass began and when the one before began (every
-- item was checked at least once since then: the age of the oldest check).
CREATE TABLE IF NOT EXISTS reconciliation_sweep (
  id                   INTEGER PRIMARY KEY CHECK (id = 1),
  cursor               INTEGER NOT NULL,
  pass_started_at      INTEGER NOT NULL,
  last_pass_started_at INTEGER
);
