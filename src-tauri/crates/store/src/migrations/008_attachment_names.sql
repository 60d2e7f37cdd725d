-- The name an attached file had (its path on the user's disk), shown on its chip.
ALTER TABLE attachments ADD COLUMN name TEXT;
