-- Memories: facts about the user, their work and their preferences that they approved (a
-- model's proposal, accepted or edited) or wrote themselves. Given to the model when a
-- question is about them.
CREATE TABLE memories (
    id              INTEGER PRIMARY KEY,
    text            TEXT NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    -- The conversation the model proposed it in; NULL when the user wrote it.
    conversation_id TEXT REFERENCES conversations(id) ON DELETE SET NULL
);

-- The memories an answer was given, with their text as it was then: shown with the answer
-- and in its export, whatever happens to the memory later.
CREATE TABLE answer_memories (
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    memory_id  INTEGER REFERENCES memories(id) ON DELETE SET NULL,
    text       TEXT NOT NULL,
    PRIMARY KEY (message_id, position)
);
