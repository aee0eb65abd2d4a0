//! Anthropic's Messages API (`POST /v1/messages`, `POST /v1/messages/count_tokens`): the request
//! (`request`), the answer as Anthropic's message and event stream (`render`), and the handlers
//! with every error in Anthropic's shape (`routes`).

pub mod render;
pub mod request;
pub mod routes;
