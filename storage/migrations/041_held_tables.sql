-- 041: the shrink guard holds tables, not whole snapshots (issue 49: the table is the unit). A
-- snapshot in which some tables shrank keeps status 'held' (it needs a confirmation or
-- `benchwatch accept`), and `held_tables` names those tables: the rows of its other tables (a new
-- category, a full board that did not shrink) are used at once. Key of a table: 'scores' ||
-- chr(31) || benchmark || chr(31) || table_version, or 'items' || chr(31) || benchmark. NULL (a
-- snapshot held before 041): every table of it is held, as before.
ALTER TABLE snapshots ADD COLUMN IF NOT EXISTS held_tables VARCHAR[];
