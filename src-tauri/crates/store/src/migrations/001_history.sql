-- Schema 1: conversations and everything that hangs off them.
-- Times are Unix milliseconds (UTC). JSON columns hold JSON text.

CREATE TABLE conversations (
    id            TEXT PRIMARY KEY,              -- random UUID: short prefixes identify it
    title         TEXT NOT NULL DEFAULT '',
    model         TEXT,                          -- the model selected for this conversation, provider:model
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    input_tokens  INTEGER NOT NULL DEFAULT 0,    -- running totals over the conversation's messages
    output_tokens INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX conversations_by_update ON conversations(updated_at DESC);

CREATE TABLE messages (
    id              INTEGER PRIMARY KEY,
    conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
    role            TEXT NOT NULL CHECK (role IN ('system', 'user', 'assistant', 'tool')),
    content         TEXT NOT NULL DEFAULT '',
    thinking        TEXT,
    model           TEXT,
    status          TEXT NOT NULL DEFAULT 'complete'
                    CHECK (status IN ('complete', 'streaming', 'stopped', 'error')),
    error           TEXT,                        -- what went wrong, for status = 'error'
    input_tokens    INTEGER,
    output_tokens   INTEGER,
    created_at      INTEGER NOT NULL
);
CREATE INDEX messages_by_conversation ON messages(conversation_id, id);

-- Files live in the data dir's attachments/ folder; rows only point at them.
CREATE TABLE attachments (
    id         INTEGER PRIMARY KEY,
    message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    kind       TEXT NOT NULL CHECK (kind IN ('image', 'file')),
    path       TEXT NOT NULL,                   -- relative to attachments/
    mime       TEXT NOT NULL,
    bytes      INTEGER NOT NULL,
    sha256     TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
CREATE INDEX attachments_by_message ON attachments(message_id);

CREATE TABLE tool_calls (
    id          TEXT PRIMARY KEY,
    message_id  INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
    server      TEXT NOT NULL,
    tool        TEXT NOT NULL,
    arguments   TEXT NOT NULL,                  -- JSON
    status      TEXT NOT NULL,
    result      TEXT,                           -- JSON
    is_error    INTEGER NOT NULL DEFAULT 0,
    duration_ms INTEGER,
    created_at  INTEGER NOT NULL
);
CREATE INDEX tool_calls_by_message ON tool_calls(message_id);

CREATE TABLE terminal_events (
    id              INTEGER PRIMARY KEY,
    conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
    message_id      INTEGER REFERENCES messages(id) ON DELETE SET NULL,
    command         TEXT NOT NULL,
    cwd             TEXT,
    exit_code       INTEGER,
    output          TEXT,                       -- bounded by the executor
    duration_ms     INTEGER NOT NULL DEFAULT 0,
    timed_out       INTEGER NOT NULL DEFAULT 0,
    denied          INTEGER NOT NULL DEFAULT 0,
    created_at      INTEGER NOT NULL
);
CREATE INDEX terminal_events_by_conversation ON terminal_events(conversation_id);

-- Every version of every review pushed in over the review socket.
CREATE TABLE review_documents (
    id         INTEGER PRIMARY KEY,
    base_uri   TEXT NOT NULL,
    content    TEXT NOT NULL,
    mode       TEXT NOT NULL CHECK (mode IN ('replace', 'append', 'update-section')),
    section    TEXT,
    created_at INTEGER NOT NULL
);

CREATE TABLE settings (
    key        TEXT PRIMARY KEY,
    value      TEXT NOT NULL,                   -- JSON
    updated_at INTEGER NOT NULL
);
