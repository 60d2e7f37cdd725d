-- The process streaming an answer (see `owner.rs`): a starting engine marks `streaming`
-- answers as stopped only when their owner has ended, never one another Perch process is
-- still writing. Cleared when the answer is finished.
ALTER TABLE messages ADD COLUMN owner TEXT;
