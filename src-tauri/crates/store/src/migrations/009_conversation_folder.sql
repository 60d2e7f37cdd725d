-- A conversation's own working folder for the terminal (NULL: the one from Settings).
ALTER TABLE conversations ADD COLUMN working_folder TEXT;
