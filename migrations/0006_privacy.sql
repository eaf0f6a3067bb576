-- What the host app says about an item: its owner, who may see it and
-- whether its counts are hidden. An item with no row is public with no owner.
-- The feed read joins this table in the same query as the item's counts, so
-- each count database holds the settings of the items that hash to it.
CREATE TABLE IF NOT EXISTS item_settings (
  item_type   TEXT    NOT NULL,
  item_id     TEXT    NOT NULL,
  owner_id    TEXT,
  visibility  TEXT    NOT NULL CHECK (visibility IN ('public', 'followers', 'private')),
  hide_counts INTEGER NOT NULL CHECK (hide_counts IN (0, 1)),
  updated_at  INTEGER NOT NULL,
  PRIMARY KEY (item_type, item_id)
) WITHOUT ROWID;

-- "blocker_id blocks blocked_id", recorded by the host app. Kept in DB (the
-- first database) only. The primary key answers "does the owner block this
-- liker"; the second index answers "who blocks this user", so the likers
-- lists can filter in both directions.
CREATE TABLE IF NOT EXISTS blocks (
  blocker_id TEXT    NOT NULL,
  blocked_id TEXT    NOT NULL,
  created_at INTEGER NOT NULL,
  PRIMARY KEY (blocker_id, blocked_id)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS blocks_blocked ON blocks (blocked_id, blocker_id);
