-- When the head took a row's counts (ms since the epoch; 0 for rows written
-- before snapshots carried it). A row can be stored after a user's like yet
-- hold counts taken before it: readers compare a user's own write with this,
-- never with updated_at.
ALTER TABLE item_counts ADD COLUMN counted_at INTEGER NOT NULL DEFAULT 0;
