//! Ollama's API (`/api/*`), for the apps that speak only it (Open WebUI, Continue, Raycast, Zed,
//! n8n...): the requests as a chat turn (`request`), the answers in Ollama's shapes, whole and
//! as NDJSON lines (`render`), and the handlers, with the model listing and `keep_alive` in one
//! place each (`routes`).

pub mod render;
pub mod request;
pub mod routes;
