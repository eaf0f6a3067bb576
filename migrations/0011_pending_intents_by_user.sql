-- A user's pending intents, in the order they were kept: read by the
-- per-user drain and by has_liked and /v1/me/likes (read-your-writes).
CREATE INDEX IF NOT EXISTS pending_intents_by_user ON pending_intents (user_id, id);
