-- Schema 7: what speculative decoding did for a reply (shown in its details): the method
-- (`prompt_lookup`, `draft_model`), the tokens proposed and kept, and the engine's rates. NULL
-- for replies decoded plainly, and for every reply written before.
ALTER TABLE messages ADD COLUMN spec_method TEXT;
ALTER TABLE messages ADD COLUMN spec_proposed INTEGER;
ALTER TABLE messages ADD COLUMN spec_accepted INTEGER;
ALTER TABLE messages ADD COLUMN spec_acceptance REAL;
ALTER TABLE messages ADD COLUMN spec_tokens_per_step REAL;
