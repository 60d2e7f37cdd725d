-- Schema 3: a regenerated answer, or an edited question, is kept beside the one it replaces.
-- `alternative_of` points at the first message of the group; the newest member is the one
-- the conversation continues from.

ALTER TABLE messages ADD COLUMN alternative_of INTEGER REFERENCES messages(id) ON DELETE CASCADE;
CREATE INDEX messages_by_alternative ON messages(alternative_of);
