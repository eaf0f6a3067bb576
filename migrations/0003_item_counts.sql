-- One row per item instead of one per counter: a like's snapshot writes one
-- row, and a feed of 50 items reads at most 50. Written by the event
-- aggregator only when the snapshot's sequence is newer than the stored one.
-- Ids are TEXT: unsigned 64-bit integers must never pass through a float.
-- With K count databases (COUNT_DATABASES) each database holds the items that
-- hash to it; every database gets the same schema.
CREATE TABLE IF NOT EXISTS item_counts (
  item_type  TEXT    NOT NULL,
  item_id    TEXT    NOT NULL,
  likes      INTEGER NOT NULL,
  views      INTEGER NOT NULL,
  shares     INTEGER NOT NULL,
  saves      INTEGER NOT NULL,
  seq        INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (item_type, item_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS item_counts_updated_at ON item_counts (updated_at);

-- The rows of the former per-counter table, folded per item. The item's
-- sequence is the oldest of its rows, so a partly old item never looks current.
INSERT INTO item_counts (item_type, item_id, likes, views, shares, saves, seq, updated_at)
SELECT item_type, item_id,
       COALESCE(SUM(CASE counter WHEN 'likes' THEN count END), 0),
       COALESCE(SUM(CASE counter WHEN 'views' THEN count END), 0),
       COALESCE(SUM(CASE counter WHEN 'shares' THEN count END), 0),
       COALESCE(SUM(CASE counter WHEN 'saves' THEN count END), 0),
       MIN(seq), MAX(updated_at)
FROM counters
GROUP BY item_type, item_id;

DROP TABLE counters;
