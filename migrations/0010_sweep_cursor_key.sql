-- The walk over the index stands at a (draw, item) pair, not a draw alone:
-- with billions of items many share a draw, and a cursor of the draw alone
-- would skip those left after a share that ended among them.
ALTER TABLE reconciliation_sweep ADD COLUMN cursor_item TEXT NOT NULL DEFAULT '';
