-- An item's counts at the end of each UTC day (the day its last snapshot of
-- that day reached the aggregator): absolute totals, so a day's likes are the
-- difference between two rows, and the snapshot's sequence number as the
-- guard that makes a redelivered or late snapshot change nothing.
-- unique_viewers is the head's HyperLogLog estimate at that snapshot (all
-- time, not per day); the newest row answers reads of unique viewers.
CREATE TABLE IF NOT EXISTS item_history (
  item_type      TEXT    NOT NULL,
  item_id        TEXT    NOT NULL,
  day            TEXT    NOT NULL, -- YYYY-MM-DD, UTC
  likes          INTEGER NOT NULL,
  saves          INTEGER NOT NULL,
  views          INTEGER NOT NULL,
  shares         INTEGER NOT NULL,
  unique_viewers INTEGER,
  seq            INTEGER NOT NULL,
  updated_at     INTEGER NOT NULL,
  PRIMARY KEY (item_type, item_id, day)
) WITHOUT ROWID;
