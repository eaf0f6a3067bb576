-- Which live hubs have sockets watching an item: the aggregator publishes an
-- item's new counts only to these hubs, so an item nobody watches costs no
-- call. Each hub writes and deletes only its own rows.
CREATE TABLE IF NOT EXISTS live_watchers (
  item TEXT    NOT NULL, -- item key, <item_type>:<item_id>
  hub  INTEGER NOT NULL,
  PRIMARY KEY (item, hub)
) WITHOUT ROWID;
