-- Every user who ever liked or saved something, so the central store's edge
-- tables can be rebuilt from the users' objects (which hold the truth of every
-- edge): objects cannot be listed, so the index is what finds them. Written by
-- the aggregator the first time it stores one of the user's edges. A user's
-- row sits in one database, picked by a hash of the user; `draw`, another hash
-- of the user, orders a walk over the index as item_index does.
CREATE TABLE IF NOT EXISTS user_index (
  draw INTEGER NOT NULL,
  user TEXT    NOT NULL,
  PRIMARY KEY (draw, user)
) WITHOUT ROWID;
