//! OpenAI's Responses API (`/v1/responses` and its kept responses): the request and its input
//! items (`request`), the response object and its streamed events (`render`), and the handlers
//! (`routes`).

pub mod render;
pub mod request;
pub mod routes;
