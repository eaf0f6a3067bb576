-- Likes, unlikes, saves and unsaves accepted (202) while the user's object
-- could not be reached in time: each states the target state and when the
-- user asked, never "toggle", so applying one twice, or late, is harmless
-- (the object ignores one asked before the user's last action on the edge).
-- Drained by the cron once the object answers again; a row is deleted only
-- after the object took (or refused) it.
CREATE TABLE IF NOT EXISTS pending_intents (
  id        INTEGER PRIMARY KEY AUTOINCREMENT,
  user_id   TEXT    NOT NULL,
  item      TEXT    NOT NULL,
  counter   TEXT    NOT NULL,
  target    INTEGER NOT NULL,
  asked_at  INTEGER NOT NULL,
  -- The stricter per-user limits of a low standing, as JSON; null: the standard ones.
  limits    TEXT
);
