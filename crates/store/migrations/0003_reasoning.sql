-- Schema 3: a reply's reasoning (what a thinking model wrote before its answer), kept apart from
-- the answer, with how long the model thought; and each chat's thinking switch.
ALTER TABLE messages ADD COLUMN reasoning TEXT;
-- Milliseconds from the first reasoning text to the answer's start (or the reply's end).
ALTER TABLE messages ADD COLUMN reasoning_ms INTEGER;
-- Which part of its reply a streamed chunk belongs to; both are folded when the reply ends.
ALTER TABLE reply_chunks ADD COLUMN part TEXT NOT NULL DEFAULT 'content' CHECK (part IN ('content', 'reasoning'));
-- Sent as the template's `enable_thinking` switch to models whose template has one.
ALTER TABLE conversations ADD COLUMN thinking INTEGER NOT NULL DEFAULT 1;
