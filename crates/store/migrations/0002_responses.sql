-- Schema 2: replies of the local server's Responses API kept with `store: true`, so that a
-- later request can continue from one (`previous_response_id`) and clients can read or delete
-- them. Not chat history: no conversation refers to them.
CREATE TABLE responses (
    -- `resp_…`, as the server answered it.
    id          TEXT    PRIMARY KEY,
    -- The response this one continued; no foreign key, so deleting one never fails or cascades
    -- (a request continuing from a chain with a deleted link is told so).
    previous_id TEXT,
    created_at  INTEGER NOT NULL,
    -- The request's own input items (JSON array), each with its id.
    input       TEXT    NOT NULL CHECK (json_valid(input)),
    -- The response object as answered (JSON).
    response    TEXT    NOT NULL CHECK (json_valid(response))
);
