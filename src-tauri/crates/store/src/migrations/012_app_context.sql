-- What the tool's app asked to have the model told (ui/update-model-context), last one only:
-- shown on the card, and given to the model with the call in later turns.
ALTER TABLE tool_calls ADD COLUMN app_context TEXT;
