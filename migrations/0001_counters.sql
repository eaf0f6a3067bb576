-- Count snapshots per item and counter, written by the event aggregator only
-- when the snapshot's sequence is newer than the stored one. Ids are TEXT:
-- they are unsigned 64-bit integers and must never pass through a float.
CREATE TABLE IF NOT EXISTS counters (
  item_type  TEXT    NOT NULL,
  item_id    TEXT    NOT NULL,
  counter    TEXT    NOT NULL,
  count      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (item_type, item_id, counter)
);
CREATE INDEX IF NOT EXISTS counters_updated_at ON counters (updated_at);
