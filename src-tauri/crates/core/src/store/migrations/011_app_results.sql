-- A tool with an app: its whole result as MCP's CallToolResult (JSON), for the app, which may
-- need more than the card keeps (the text cut for the model, a large structured part).
ALTER TABLE tool_calls ADD COLUMN app_result TEXT;
-- What the tool's app asked to have the model told (ui/update-model-context), last one only:
-- shown on the card, and given to the model with the call in later turns.
ALTER TABLE tool_calls ADD COLUMN app_context TEXT;
