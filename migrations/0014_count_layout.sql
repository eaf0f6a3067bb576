-- Which count databases hold the items' counts and settings, and where a
-- reshard stands: one row, in the primary database (DB), which every isolate
-- reads and caches for LAYOUT_TTL_MS (docs/reads.md, "Resharding"). No row:
-- the layout is COUNT_DATABASES, with no reshard running.
CREATE TABLE count_layout (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  databases INTEGER NOT NULL,
  next_databases INTEGER,
  phase TEXT,
  cursor TEXT,
  done INTEGER NOT NULL DEFAULT 0,
  total INTEGER NOT NULL DEFAULT 0,
  repaired INTEGER NOT NULL DEFAULT 0,
  changed_at INTEGER NOT NULL
);
