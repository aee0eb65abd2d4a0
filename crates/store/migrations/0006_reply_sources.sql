-- Schema 6: the document passages a reply was given (a document too large for the context is
-- searched per question; the best passages go into the prompt). Kept with the reply, so that
-- its citations read the same after a restart even if the document's index is rebuilt.
CREATE TABLE reply_sources (
    -- The reply; cascades with it.
    message_id  INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    -- 1, 2, ...: the number the prompt and the reply's "Sources" give the passage.
    number      INTEGER NOT NULL CHECK (number >= 1),
    -- The document's attachment (its bytes stay while a message refers to it).
    attachment  TEXT    NOT NULL,
    -- The name it was attached under ("report.pdf").
    document    TEXT    NOT NULL,
    -- 1-based page, for a format that has pages.
    page        INTEGER CHECK (page IS NULL OR page >= 1),
    text        TEXT    NOT NULL,
    PRIMARY KEY (message_id, number)
);
