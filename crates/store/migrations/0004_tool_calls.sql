-- Schema 4: the tool calls of an assistant reply (MCP tools in a chat). One reply holds all its
-- rounds: its content (and reasoning) is the text of every round concatenated, and each call
-- records where in that text it came, so that the app can rebuild the turns of each round.
CREATE TABLE tool_calls (
    -- The reply; the trigger below refuses any message but an assistant's.
    message_id       INTEGER NOT NULL REFERENCES messages (id) ON DELETE CASCADE,
    -- 0, 1, ... in the order the calls were added to the reply.
    position         INTEGER NOT NULL CHECK (position >= 0),
    -- Calls with the same round were asked for in one assistant turn.
    round            INTEGER NOT NULL CHECK (round >= 0),
    -- The model's id for the call, or one the app made up; results refer to it.
    call_id          TEXT    NOT NULL,
    -- The MCP server offering the tool; NULL for a tool that is no server's.
    server           TEXT,
    tool             TEXT    NOT NULL,
    -- The arguments as JSON text; arguments the model wrote that are not JSON are kept as a
    -- JSON string.
    arguments        TEXT    NOT NULL CHECK (json_valid(arguments)),
    -- Byte lengths of the reply's content and reasoning when the call was added.
    content_offset   INTEGER NOT NULL CHECK (content_offset >= 0),
    reasoning_offset INTEGER NOT NULL CHECK (reasoning_offset >= 0),
    -- 'auto': allowed without asking, because the user earlier allowed this tool always.
    decision         TEXT    NOT NULL DEFAULT 'pending'
        CHECK (decision IN ('pending', 'allowed_once', 'allowed_always', 'denied', 'auto')),
    status           TEXT    NOT NULL DEFAULT 'awaiting'
        CHECK (status IN ('awaiting', 'running', 'done', 'failed', 'denied', 'cancelled', 'interrupted')),
    -- What the tool returned: text, and images as a JSON array of attachment hashes (the
    -- files go through the attachments table; NULL when there are none).
    result_text      TEXT,
    result_images    TEXT    CHECK (result_images IS NULL OR json_valid(result_images)),
    -- Whether the tool itself reported its result as an error (MCP's isError).
    is_error         INTEGER NOT NULL DEFAULT 0 CHECK (is_error IN (0, 1)),
    -- Why the call could not run or did not finish (timeout, server gone, ...).
    error            TEXT,
    -- Unix milliseconds.
    created_at       INTEGER NOT NULL,
    started_at       INTEGER,
    ended_at         INTEGER,
    PRIMARY KEY (message_id, position)
) WITHOUT ROWID;
-- Deleting a conversation asks whether another message still uses an image; only calls with
-- images are looked at.
CREATE INDEX tool_calls_with_images ON tool_calls (message_id) WHERE result_images IS NOT NULL;

CREATE TRIGGER tool_calls_of_assistants_only BEFORE INSERT ON tool_calls
WHEN (SELECT role FROM messages WHERE id = new.message_id) IS NOT 'assistant'
BEGIN
    SELECT RAISE(ABORT, 'a tool call belongs to an assistant reply');
END;
