-- A tool with an app: its whole result as MCP's CallToolResult (JSON), for the app, which may
-- need more than the card keeps (the text cut for the model, a large structured part).
ALTER TABLE tool_calls ADD COLUMN app_result TEXT;
