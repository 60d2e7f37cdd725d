-- A call an MCP App made from inside a tool card: the card's call id (NULL: the model's call).
-- Kept for the record (the card lists them, exports include them); never replayed to the model.
ALTER TABLE tool_calls ADD COLUMN app_of TEXT;
CREATE INDEX tool_calls_by_app ON tool_calls(app_of) WHERE app_of IS NOT NULL;
