-- Schema 5: documents indexed for search (chat with documents too big to go whole into a
-- prompt). An index is one attached document cut into passages by one chunking (its settings'
-- key) and embedded by one model: a document dropped again finds its index, another embedding
-- model or chunking makes another. Deleting the attachment deletes its indexes.
CREATE TABLE document_indexes (
    id         INTEGER PRIMARY KEY,
    hash       TEXT    NOT NULL REFERENCES attachments (hash) ON DELETE CASCADE,
    -- The embedding model's id (as the app names it: its folder or file).
    model      TEXT    NOT NULL CHECK (length(model) > 0),
    -- confab_documents::ChunkSettings::key, e.g. 'chunk-v1-t256-o32'.
    chunking   TEXT    NOT NULL CHECK (length(chunking) > 0),
    -- Every vector's length in floats.
    dimension  INTEGER NOT NULL CHECK (dimension > 0),
    created_at INTEGER NOT NULL,
    UNIQUE (hash, model, chunking)
);

CREATE TABLE document_passages (
    id         INTEGER PRIMARY KEY,
    index_id   INTEGER NOT NULL REFERENCES document_indexes (id) ON DELETE CASCADE,
    -- 0, 1, ... in reading order.
    ordinal    INTEGER NOT NULL CHECK (ordinal >= 0),
    -- The 1-based page (PDF), NULL for formats without pages.
    page       INTEGER CHECK (page IS NULL OR page > 0),
    -- Where the passage is: the document's section (a PDF's page, else 0) and byte offsets in
    -- its text.
    section    INTEGER NOT NULL CHECK (section >= 0),
    span_start INTEGER NOT NULL CHECK (span_start >= 0),
    span_end   INTEGER NOT NULL CHECK (span_end >= span_start),
    -- The headings it is under, outermost first: a JSON array of strings.
    headings   TEXT    NOT NULL CHECK (json_valid(headings)),
    text       TEXT    NOT NULL,
    -- The embedding: `dimension` little-endian f32s.
    vector     BLOB    NOT NULL,
    UNIQUE (index_id, ordinal)
);

-- Word search beside the vectors; the Porter stemmer lets a question's "renovating" find a
-- passage's "renovation".
CREATE VIRTUAL TABLE document_passages_fts USING fts5 (
    text,
    content = 'document_passages',
    content_rowid = 'id',
    tokenize = 'porter unicode61 remove_diacritics 2'
);

CREATE TRIGGER document_passages_fts_insert AFTER INSERT ON document_passages
BEGIN
    INSERT INTO document_passages_fts (rowid, text) VALUES (new.id, new.text);
END;

CREATE TRIGGER document_passages_fts_delete AFTER DELETE ON document_passages
BEGIN
    INSERT INTO document_passages_fts (document_passages_fts, rowid, text) VALUES ('delete', old.id, old.text);
END;
