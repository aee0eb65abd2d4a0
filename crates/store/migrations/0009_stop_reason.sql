-- Schema 9: why the model stopped writing a reply that ended on its own (`end_of_turn`,
-- `stop_string`, `token_limit`, `context_full`), so that a reply the token limit cut is shown as
-- cut, with Continue. NULL for replies that did not end on their own, and for every older one.
ALTER TABLE messages ADD COLUMN stop_reason TEXT;
