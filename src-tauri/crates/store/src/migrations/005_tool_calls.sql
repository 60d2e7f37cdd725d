-- Tool calls keep their place in the answer: the round of the agent loop they belong to and
-- how much of the answer's text came before them, so a reopened conversation shows each card
-- where it appeared and later turns replay the rounds to the model.
ALTER TABLE tool_calls ADD COLUMN round INTEGER NOT NULL DEFAULT 0;
ALTER TABLE tool_calls ADD COLUMN text_offset INTEGER NOT NULL DEFAULT 0;
-- The provider's id for the call (tool results are matched to calls by it).
ALTER TABLE tool_calls ADD COLUMN call_id TEXT NOT NULL DEFAULT '';

-- "Allow for this conversation" answers.
CREATE TABLE tool_grants (
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    server          TEXT NOT NULL,
    tool            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, server, tool)
);
