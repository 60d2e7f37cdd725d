-- The terminal: every command the model ran or tried to run (seed 002's table, with the
-- blocklist's reason, the sandbox in force and the tool call it belongs to), and the
-- commands the user chose to always allow, kept as hashes of their normalised form.
CREATE TABLE terminal_events (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    conversation_id TEXT REFERENCES conversations(id) ON DELETE CASCADE,
    message_id      INTEGER,
    call_id         TEXT,
    command         TEXT NOT NULL,
    cwd             TEXT NOT NULL,
    exit_code       INTEGER,
    -- The first 50 KB of what the terminal showed, escapes included (the panel replays them).
    output          TEXT NOT NULL DEFAULT '',
    output_bytes    INTEGER NOT NULL DEFAULT 0,
    duration_ms     INTEGER NOT NULL DEFAULT 0,
    pty             INTEGER NOT NULL DEFAULT 1,
    background      INTEGER NOT NULL DEFAULT 0,
    timed_out       INTEGER NOT NULL DEFAULT 0,
    denied          INTEGER NOT NULL DEFAULT 0,
    killed          INTEGER NOT NULL DEFAULT 0,
    blocked         TEXT,
    sandbox         TEXT NOT NULL DEFAULT '',
    created_at      INTEGER NOT NULL
);
CREATE INDEX terminal_events_conversation ON terminal_events(conversation_id, id);

CREATE TABLE terminal_approvals (
    hash       TEXT PRIMARY KEY,
    label      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
