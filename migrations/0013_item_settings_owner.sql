-- An account's deletion finds the items its user owned (whose owner it then
-- clears) without a scan of the items' settings.
CREATE INDEX IF NOT EXISTS item_settings_owner ON item_settings (owner_id) WHERE owner_id IS NOT NULL;
