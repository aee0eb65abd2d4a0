//! Every failure the server answers with, in OpenAI's error shape:
//! `{"error": {"message", "type", "param", "code"}}`, so clients raise their usual exceptions.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use confab_engine::{EngineError, Remedy};

use crate::pool::PoolError;
use serde_json::json;

/// Failures before the server is listening.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    #[error("could not listen on {address}: {source}. Pick another port (--port) or stop what is using it.")]
    Bind { address: String, source: std::io::Error },
    #[error("{address} is reachable from other machines, so the server needs a key there: set one with --api-key or CONFAB_API_KEY (or listen on 127.0.0.1)")]
    KeyRequired { address: String },
}

/// One error answer: the HTTP status and the body's fields.
#[derive(Debug, Clone)]
pub struct ApiError {
    pub status: StatusCode,
    pub message: String,
    /// `invalid_request_error`, `authentication_error`, `not_found_error`, `server_error`.
    pub kind: &'static str,
    /// The request field at fault, where there is one.
    pub param: Option<String>,
    pub code: Option<&'static str>,
}

impl ApiError {
    pub fn invalid(param: Option<&str>, message: impl Into<String>) -> Self {
        Self {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(str::to_owned),
            code: None,
        }
    }

    pub fn with_code(mut self, code: &'static str) -> Self {
        self.code = Some(code);
        self
    }

    pub fn with_status(mut self, status: StatusCode) -> Self {
        self.status = status;
        self
    }

    /// A failure of the server's own, not the request's.
    pub fn internal(message: impl Into<String>) -> Self {
        Self { status: StatusCode::INTERNAL_SERVER_ERROR, message: message.into(), kind: "server_error", param: None, code: None }
    }

    /// A chat, completion or message request to a model that only gives vectors.
    pub fn embedding_only(name: &str) -> Self {
        Self::invalid(
            Some("model"),
            format!("`{name}` is an embedding model: it answers POST /v1/embeddings, not chat, completions, responses or messages. Ask a chat model for those (GET /v1/models lists what this server runs)."),
        )
        .with_code("model_not_supported")
    }

    /// An embeddings request naming a chat model.
    pub fn not_an_embedder(asked: &str, embedders: &[String]) -> Self {
        let message = match embedders {
            [] => format!("`{asked}` is a chat model; it gives no embeddings, and this server finds no embedding model. Start it with `confab serve --embedding-model <folder>` (a sentence-transformers folder such as Qwen3-Embedding or EmbeddingGemma), or put one in a models folder."),
            _ => format!("`{asked}` is a chat model; it gives no embeddings. Ask for an embedding model: {}.", list_names(embedders)),
        };
        Self::invalid(Some("model"), message).with_code("model_not_supported")
    }

    pub fn unauthorized() -> Self {
        Self {
            status: StatusCode::UNAUTHORIZED,
            message:
                "Missing or wrong API key. Send it as `Authorization: Bearer <key>` or `x-api-key: <key>` (the key set in Confab's settings or with --api-key)."
                    .into(),
            kind: "authentication_error",
            param: None,
            code: Some("invalid_api_key"),
        }
    }

    /// A request whose `Host` names another server: a page whose name was re-bound to this
    /// machine (DNS rebinding), or a name the user has not added.
    pub fn host_not_allowed(host: &str) -> Self {
        Self::invalid(None, format!(
            "The Host `{host}` does not name this server, so the request is refused: a web page whose name points at this machine must not reach it. Call it as localhost or 127.0.0.1; to use another name, add it to the allowed hosts (`confab serve --allowed-host NAME` or CONFAB_ALLOWED_HOSTS)."
        ))
        .with_status(StatusCode::FORBIDDEN)
        .with_code("host_not_allowed")
    }

    /// A browser request from a page the user has not allowed.
    pub fn origin_not_allowed(origin: &str) -> Self {
        Self::invalid(None, format!(
            "Requests from web pages of {origin} are refused: any page the user has open could otherwise use this server. To allow that origin, add it to the allowed origins (`confab serve --allowed-origin {origin}`, CONFAB_ORIGINS, or the app's Local server settings)."
        ))
        .with_status(StatusCode::FORBIDDEN)
        .with_code("origin_not_allowed")
    }

    /// A body sent as anything but JSON (a browser's "simple" `text/plain` request among them).
    pub fn not_json(content_type: Option<&str>) -> Self {
        let sent = content_type.map_or("no Content-Type".to_string(), |t| format!("Content-Type `{t}`"));
        Self::invalid(None, format!("This endpoint takes a JSON body sent with `Content-Type: application/json`; the request has {sent} (with curl, add -H \"Content-Type: application/json\")."))
            .with_status(StatusCode::UNSUPPORTED_MEDIA_TYPE)
            .with_code("unsupported_media_type")
    }

    /// A response id the server does not keep (never kept, not stored, or deleted).
    pub fn response_not_found(id: &str, param: Option<&str>) -> Self {
        Self::invalid(param, format!("No response with id `{id}` is kept here (it was made with store: false, deleted, or never existed)."))
            .with_status(StatusCode::NOT_FOUND)
            .with_code("not_found")
    }

    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// The same error, naming `to` where it named `from` (an engine error named in another
    /// API's fields).
    pub fn with_param_renamed(mut self, from: &str, to: &str) -> Self {
        if self.param.as_deref() == Some(from) {
            self.param = Some(to.to_string());
        }
        self
    }

    pub fn not_found(path: &str) -> Self {
        Self::invalid(None, format!("There is no endpoint {path}. This server offers POST /v1/chat/completions, POST /v1/completions, POST /v1/embeddings, POST /v1/responses, GET and DELETE /v1/responses/{{id}}, POST /v1/messages, POST /v1/messages/count_tokens, GET /v1/models and GET /health; and Ollama's API: POST /api/chat, /api/generate, /api/embed, /api/embeddings, /api/show and /api/pull, GET /api/tags, /api/ps and /api/version."))
            .with_status(StatusCode::NOT_FOUND)
            .with_code("unknown_url")
    }

    pub fn method_not_allowed() -> Self {
        Self::invalid(None, "This endpoint does not take that method; chat, completions, embeddings, responses and messages are POST, models and health are GET, a kept response is GET or DELETE; Ollama's /api/tags, /api/ps and /api/version are GET, its others POST.")
            .with_status(StatusCode::METHOD_NOT_ALLOWED)
            .with_code("method_not_allowed")
    }

    pub fn body_too_large(limit: usize) -> Self {
        Self::invalid(None, format!(
            "The request body is over the server's limit of {} MiB ({}; confab serve --body-limit-mb raises it); send smaller images or clips.",
            limit >> 20,
            confab_limits::SERVER_BODY_BYTES.name
        ))
            .with_status(StatusCode::PAYLOAD_TOO_LARGE)
            .with_code("request_too_large")
    }

    pub fn body(&self) -> serde_json::Value {
        json!({ "error": { "message": self.message, "type": self.kind, "param": self.param, "code": self.code } })
    }
}

/// What to change, in the words of `confab serve`: a request's fields and the server's flags.
fn remedy_words(remedy: Remedy) -> String {
    match remedy {
        Remedy::LowerMaxTokens => "lower max_tokens".into(),
        Remedy::QuantizeKeysValues { bits: None } => format!("{remedy} (--kv-bits)"),
        Remedy::QuantizeKeysValues { bits: Some(bits) } => format!("{remedy} (--kv-bits {bits})"),
        Remedy::RaiseMemoryBudget => format!("{remedy} (--memory-budget)"),
        Remedy::LoadDraftModel => "load one with `confab serve --draft-model PATH`".into(),
        Remedy::ReportBug => format!("{remedy} (`confab doctor`)"),
    }
}

/// An engine error's message as the server says it.
pub fn engine_message(error: &EngineError) -> String {
    error.describe(&remedy_words)
}

impl From<EngineError> for ApiError {
    fn from(error: EngineError) -> Self {
        let message = engine_message(&error);
        match &error {
            // The engine's constraint comes from `response_format`, the one field that sets it.
            EngineError::InvalidSetting { name: "constraint", .. } | EngineError::Constraint(_) => {
                Self::invalid(Some("response_format"), message)
            }
            EngineError::InvalidSetting { name, .. } => Self::invalid(Some(name), message),
            EngineError::NeverFits(_) => Self::invalid(Some("max_tokens"), message),
            EngineError::NoDraftModel => Self::invalid(Some("speculative"), message),
            EngineError::ContextOverflow { .. } => Self::invalid(Some("messages"), message).with_code("context_length_exceeded"),
            EngineError::Media { .. } | EngineError::ModelCannotRead { .. } => Self::invalid(Some("messages"), message),
            EngineError::Template(_) | EngineError::Tokenizer(_) => Self::invalid(None, message),
            EngineError::EngineStopped => {
                Self { status: StatusCode::SERVICE_UNAVAILABLE, message, kind: "server_error", param: None, code: None }
            }
            _ => Self { status: StatusCode::INTERNAL_SERVER_ERROR, message, kind: "server_error", param: None, code: None },
        }
    }
}

impl From<PoolError> for ApiError {
    fn from(error: PoolError) -> Self {
        let message = error.to_string();
        match error {
            PoolError::Unknown { available, .. } => {
                Self::invalid(Some("model"), format!("{message}; GET /v1/models lists the models it can run: {}.", list_names(&available)))
                    .with_code("model_not_found")
                    .with_status(StatusCode::NOT_FOUND)
            }
            PoolError::NotLoaded { available, .. } => {
                Self::invalid(Some("model"), format!("{message}; the loaded models are {}.", list_names(&available)))
                    .with_code("model_not_found")
                    .with_status(StatusCode::NOT_FOUND)
            }
            PoolError::Unsupported { .. } | PoolError::NeverFits { .. } => {
                Self::invalid(Some("model"), message).with_code("model_not_supported")
            }
            PoolError::Resident { .. } => Self::invalid(Some("model"), message),
            PoolError::NoRoom { .. } => Self {
                status: StatusCode::SERVICE_UNAVAILABLE,
                message,
                kind: "server_error",
                param: Some("model".into()),
                code: Some("model_not_loaded"),
            },
            PoolError::Load { source, .. } => Self { message, param: Some("model".into()), ..ApiError::from(source) },
        }
    }
}

/// Names for a message: the first few, and how many more.
fn list_names(names: &[String]) -> String {
    const SHOWN: usize = 8;
    let mut text = names.iter().take(SHOWN).map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(" and {} more", names.len() - SHOWN));
    }
    if text.is_empty() {
        text = "none yet".into();
    }
    text
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = self.body();
        self.answer(body)
    }
}

/// Why a request was refused, kept on its response for the request's log line.
#[derive(Debug, Clone)]
pub(crate) struct Refusal(pub String);

impl ApiError {
    /// The error's answer with `body` (its API's shape), carrying the reason for the log.
    pub(crate) fn answer(&self, body: serde_json::Value) -> Response {
        let mut response = (self.status, axum::Json(body)).into_response();
        let reason = match &self.param {
            Some(param) => format!("{param}: {}", self.message),
            None => self.message.clone(),
        };
        response.extensions_mut().insert(Refusal(reason));
        response
    }
}
