-- COUNT_DATABASES as it was when the first reshard began. The daily history
-- and the two indexes stay where COUNT_DATABASES places them (a reshard does
-- not move them), so from then on it must keep that value: the reshard step
-- refuses to run, and the layout's readers report a problem, while it
-- differs (docs/reads.md, "Resharding"). NULL on a row written before this
-- column existed: its value was not recorded, and is not checked.
ALTER TABLE count_layout ADD COLUMN count_databases INTEGER;
