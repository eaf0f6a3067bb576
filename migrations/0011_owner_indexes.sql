-- An account's deletion finds what names the user without a scan: the items
-- it owned (whose owner is then cleared) and the toggles it left in the
-- durable buffer (which are then deleted).
CREATE INDEX IF NOT EXISTS item_settings_owner ON item_settings (owner_id) WHERE owner_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS pending_intents_user ON pending_intents (user_id);
