-- The terminal (schema 1 made terminal_events from seed 002's table): what the executor now
-- records besides, and the commands the user chose to always allow, kept as hashes of their
-- normalised form.
ALTER TABLE terminal_events ADD COLUMN call_id TEXT;
ALTER TABLE terminal_events ADD COLUMN output_bytes INTEGER NOT NULL DEFAULT 0;
ALTER TABLE terminal_events ADD COLUMN pty INTEGER NOT NULL DEFAULT 1;
ALTER TABLE terminal_events ADD COLUMN background INTEGER NOT NULL DEFAULT 0;
ALTER TABLE terminal_events ADD COLUMN killed INTEGER NOT NULL DEFAULT 0;
-- The blocklist's reason, when it refused the command.
ALTER TABLE terminal_events ADD COLUMN blocked TEXT;
ALTER TABLE terminal_events ADD COLUMN sandbox TEXT NOT NULL DEFAULT '';

CREATE TABLE terminal_approvals (
    hash       TEXT PRIMARY KEY,
    label      TEXT NOT NULL,
    created_at INTEGER NOT NULL
);
