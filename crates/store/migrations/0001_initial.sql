-- Confab history, schema 1. Times are Unix milliseconds (INTEGER). Ids are INTEGER rowids.

CREATE TABLE conversations (
    id              INTEGER PRIMARY KEY,
    title           TEXT    NOT NULL,
    created_at      INTEGER NOT NULL,
    updated_at      INTEGER NOT NULL,
    model           TEXT,
    system_prompt   TEXT,
    -- The message the UI shows the path to; NULL while the conversation is empty.
    current_leaf_id INTEGER REFERENCES messages (id) ON DELETE SET NULL
);
-- The sidebar: most recently updated first, keyset-paginated on (updated_at, id).
CREATE INDEX conversations_by_update ON conversations (updated_at DESC, id DESC);
-- Lets deleting a message find the conversation pointing at it without a scan.
CREATE INDEX conversations_by_leaf ON conversations (current_leaf_id);

-- A tree per conversation: editing or regenerating adds a sibling (same parent_id).
-- parent_id has no ON DELETE CASCADE on purpose: a cascade along a long chain recurses once
-- per level and SQLite caps trigger depth at 1000. Messages go when their conversation goes.
CREATE TABLE messages (
    id               INTEGER PRIMARY KEY,
    conversation_id  INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
    parent_id        INTEGER REFERENCES messages (id),
    role             TEXT    NOT NULL CHECK (role IN ('system', 'user', 'assistant')),
    -- For a 'streaming' reply the text so far is content || its reply_chunks, in seq order.
    content          TEXT    NOT NULL DEFAULT '',
    status           TEXT    NOT NULL
        CHECK (status IN ('streaming', 'complete', 'stopped', 'error', 'interrupted')),
    error            TEXT,
    created_at       INTEGER NOT NULL,
    -- Generation stats of an assistant reply; all NULL when there are none.
    prompt_tokens    INTEGER,
    cached_tokens    INTEGER,
    generated_tokens INTEGER,
    ttft_ms          INTEGER,
    decode_tok_s     REAL,
    stats_model      TEXT
);
CREATE INDEX messages_by_conversation ON messages (conversation_id, parent_id);
CREATE INDEX messages_by_parent ON messages (parent_id);
CREATE INDEX messages_streaming ON messages (status) WHERE status = 'streaming';

-- Deltas of replies in progress: appending is one small insert, however long the reply is.
-- finish_reply and recover_interrupted fold them into messages.content and delete them.
CREATE TABLE reply_chunks (
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    text       TEXT    NOT NULL,
    PRIMARY KEY (message_id, seq)
) WITHOUT ROWID;

-- Content-addressed files: <data>/attachments/<hash[0..2]>/<hash[2..]>.
CREATE TABLE attachments (
    hash          TEXT    PRIMARY KEY CHECK (length(hash) = 64),
    mime          TEXT    NOT NULL,
    size          INTEGER NOT NULL,
    original_name TEXT,
    width         INTEGER,
    height        INTEGER,
    duration_ms   INTEGER,
    created_at    INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE message_attachments (
    message_id INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    position   INTEGER NOT NULL,
    hash       TEXT    NOT NULL REFERENCES attachments (hash),
    PRIMARY KEY (message_id, position)
) WITHOUT ROWID;
CREATE INDEX message_attachments_by_hash ON message_attachments (hash);

CREATE TABLE settings (
    key        TEXT    PRIMARY KEY,
    value      TEXT    NOT NULL CHECK (json_valid(value)),
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;

-- Full-text search. The index holds exactly the messages that are not streaming, so that a
-- reply is indexed once, when it ends, not rewritten per token. Its external content is a view
-- with that same filter, which keeps FTS5's 'integrity-check' and 'rebuild' exact.
CREATE VIEW searchable_messages AS
    SELECT id, content FROM messages WHERE status <> 'streaming';

CREATE VIRTUAL TABLE messages_fts USING fts5 (
    content,
    content = 'searchable_messages',
    content_rowid = 'id',
    tokenize = 'unicode61 remove_diacritics 2'
);

CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
WHEN new.status <> 'streaming'
BEGIN
    INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
END;

CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
WHEN old.status <> 'streaming'
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content) VALUES ('delete', old.id, old.content);
END;

CREATE TRIGGER messages_fts_update AFTER UPDATE OF content, status ON messages
WHEN old.status <> 'streaming' OR new.status <> 'streaming'
BEGIN
    INSERT INTO messages_fts (messages_fts, rowid, content)
        SELECT 'delete', old.id, old.content WHERE old.status <> 'streaming';
    INSERT INTO messages_fts (rowid, content)
        SELECT new.id, new.content WHERE new.status <> 'streaming';
END;
