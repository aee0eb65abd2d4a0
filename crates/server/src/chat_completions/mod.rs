//! OpenAI's Chat Completions API (`POST /v1/chat/completions`) and the legacy Completions API
//! (`POST /v1/completions`): the request (`request`), its messages as the engine's
//! (`chat_messages`), the answer's JSON whole and as stream chunks (`render`), and the handlers
//! (`routes`).

pub mod chat_messages;
pub mod render;
pub mod request;
pub mod routes;
