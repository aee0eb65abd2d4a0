//! confab-server: a local OpenAI-compatible HTTP API on Confab's engine, for editors, agents,
//! scripts and notebooks. `confab serve` and the app both start it; it never touches the chat
//! history (server requests are not conversations).
//!
//! Endpoints: `POST /v1/chat/completions`, `POST /v1/completions` (whole or streamed as
//! server-sent events), OpenAI's Responses (`POST /v1/responses`, `POST
//! /v1/responses/input_tokens`, `GET` and `DELETE /v1/responses/{id}`, `GET
//! /v1/responses/{id}/input_items`; kept responses live in the history database's own table),
//! Anthropic's `POST /v1/messages` and `POST /v1/messages/count_tokens`, `POST /v1/embeddings`
//! (from an embedding model loaded beside the chat model, or served as the model), `GET /v1/models`,
//! `GET /health`; and Ollama's API on the same engine and turn: `POST /api/chat` and `POST
//! /api/generate` (NDJSON streams by default, or one object), `POST /api/embed` and the legacy
//! `POST /api/embeddings`, `GET /api/tags`, `GET /api/ps`, `POST /api/show`, `GET /api/version`,
//! and `POST /api/pull` (from the Hugging Face hub, as `confab pull`). Every error is in the
//! shape of its endpoint's API.
//!
//! Layout: `access` (who may call) and `routes` (every endpoint) stand in front; each API has its
//! folder (`chat_completions/`, with the legacy Completions; `messages/`; `responses/`;
//! `ollama/`), each
//! folder a `request` (the wire request into the engine's), a `render` (the answer in that API's
//! shape, whole and streamed) and its `routes`; `embeddings` is one file; `shared/` is what the
//! APIs all stand on (the turn, the error shape, bodies, media files, a running request).

mod access;
mod chat_completions;
mod embeddings;
mod messages;
mod ollama;
mod responses;
mod routes;
mod shared;

use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use confab_engine::{Engine, ModelId, ModelInfo};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

pub use access::{is_origin_pattern, AccessRules};
pub use shared::error::{ApiError, ServerError};

/// Loopback only, unless the user asks for more.
pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8080;
/// Room for a few photos or a clip, base64-encoded.
pub const DEFAULT_BODY_LIMIT: usize = 25 << 20;

/// Where the server gets its engine and model: `confab serve` holds one model for good; the app
/// serves whichever model the user has loaded.
pub trait ModelSource: Send + Sync + 'static {
    fn engine(&self) -> &Engine;
    /// The model requests run on; `None` while none is loaded.
    fn current(&self) -> Option<ServedModel>;
    /// An embedding model loaded beside it, for `POST /v1/embeddings`.
    fn embedding(&self) -> Option<ServedModel> {
        None
    }
}

/// The loaded model, and the name clients call it by (`GET /v1/models`).
#[derive(Debug, Clone)]
pub struct ServedModel {
    pub id: ModelId,
    pub name: String,
    pub info: ModelInfo,
    /// The draft model loaded beside it, for requests that ask for `"speculative": "draft_model"`.
    pub draft: Option<ModelId>,
}

impl ServedModel {
    /// Whether a request's `model` names it: its name or its path.
    fn answers_to(&self, asked: &str) -> bool {
        self.name == asked || self.info.path.to_str() == Some(asked)
    }
}

#[derive(Debug, Clone)]
pub struct ServerOptions {
    pub host: String,
    /// 0 picks a free port (see `RunningServer::address`).
    pub port: u16,
    /// When set, every API call must send `Authorization: Bearer <key>` or `x-api-key: <key>`.
    /// Required to listen beyond loopback.
    pub api_key: Option<String>,
    /// Host names and origins allowed besides loopback's and the app's (see `access`).
    pub access: AccessRules,
    /// Requests with a larger body are refused (413).
    pub body_limit: usize,
    /// Where Responses API replies are kept (`store`, `previous_response_id`); without it,
    /// none is kept.
    pub responses: Option<confab_store::Store>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            host: DEFAULT_HOST.into(),
            port: DEFAULT_PORT,
            api_key: None,
            access: AccessRules::default(),
            body_limit: DEFAULT_BODY_LIMIT,
            responses: None,
        }
    }
}

/// What every handler shares.
pub(crate) struct ServerState {
    source: Arc<dyn ModelSource>,
    api_key: Option<String>,
    access: access::Access,
    body_limit: usize,
    responses: Option<confab_store::Store>,
    active: Arc<AtomicUsize>,
    next_serial: AtomicU64,
    /// Unix seconds, shown as the model's `created`.
    started: u64,
}

impl ServerState {
    /// The loaded model, when the request names it.
    pub(crate) fn served(&self, asked: Option<&str>) -> Result<ServedModel, ApiError> {
        let asked =
            asked.ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /v1/models lists the model this server runs."))?;
        if let Some(embedder) = self.source.embedding().filter(|m| m.answers_to(asked)) {
            return Err(ApiError::embedding_only(&embedder.name));
        }
        let current = self.source.current();
        match current {
            Some(model) if model.answers_to(asked) && model.info.embedding.is_some() => Err(ApiError::embedding_only(&model.name)),
            Some(model) if model.answers_to(asked) => Ok(model),
            Some(model) => Err(ApiError::unknown_model(asked, Some(&model.name))),
            None => Err(ApiError::no_model()),
        }
    }

    /// The loaded embedding model the request names (the one beside the chat model, or the
    /// served model itself when it is one).
    pub(crate) fn embedder(&self, asked: Option<&str>) -> Result<ServedModel, ApiError> {
        let asked = asked
            .ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /v1/models lists the models this server runs."))?;
        let current = self.source.current();
        let loaded: Vec<ServedModel> =
            self.source.embedding().into_iter().chain(current.clone()).filter(|m| m.info.embedding.is_some()).collect();
        if let Some(model) = loaded.iter().find(|m| m.answers_to(asked)) {
            return Ok(model.clone());
        }
        match (loaded.first(), current) {
            (None, _) => Err(ApiError::no_embedding_model()),
            (Some(embedder), Some(chat)) if chat.answers_to(asked) => Err(ApiError::invalid(
                Some("model"),
                format!(
                    "`{asked}` is a chat model; it gives no embeddings. Ask for `{}`, the embedding model this server runs.",
                    embedder.name
                ),
            )),
            (Some(embedder), _) => Err(ApiError::unknown_model(asked, Some(&embedder.name))),
        }
    }
}

impl ServerState {
    /// The length in tokens of `prompt` through the model's template with `chat`, without
    /// running it (the count_tokens endpoints).
    pub(crate) async fn prompt_tokens(
        self: &Arc<Self>,
        model: ModelId,
        prompt: confab_engine::Prompt,
        chat: confab_engine::ChatOptions,
    ) -> Result<usize, ApiError> {
        let counting = self.clone();
        // The engine answers on its own thread; waiting for it must not hold a tokio worker.
        let ids =
            tokio::task::spawn_blocking(move || counting.source.engine().tokenize_chat(model, prompt, chat)).await.map_err(|e| {
                ApiError::invalid(None, format!("counting failed: {e}")).with_status(axum::http::StatusCode::INTERNAL_SERVER_ERROR)
            })??;
        Ok(ids.len())
    }
}

/// A server that is listening; `stop` ends it.
pub struct RunningServer {
    address: SocketAddr,
    active: Arc<AtomicUsize>,
    stop: Option<oneshot::Sender<()>>,
    task: JoinHandle<()>,
}

impl RunningServer {
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Requests the engine is working on (or still finishing after their client left).
    pub fn active_requests(&self) -> usize {
        self.active.load(Ordering::Relaxed)
    }

    /// Stops accepting connections and waits for those open to finish.
    pub async fn stop(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let _ = (&mut self.task).await;
    }
}

/// Listening beyond loopback needs a key: there every machine on the network can call. `host`
/// is an address or a name (any name but `localhost` may reach beyond this machine).
pub fn check_exposure(host: &str, api_key: Option<&str>) -> Result<(), ServerError> {
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let loopback = host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback());
    match api_key {
        Some(key) if !key.is_empty() => Ok(()),
        _ if loopback => Ok(()),
        _ => Err(ServerError::KeyRequired { address: host.to_string() }),
    }
}

/// Binds the address and serves on the current tokio runtime until `stop`.
pub async fn start(options: ServerOptions, source: Arc<dyn ModelSource>) -> Result<RunningServer, ServerError> {
    let address = format!("{}:{}", options.host, options.port);
    let listener = tokio::net::TcpListener::bind((options.host.as_str(), options.port))
        .await
        .map_err(|source| ServerError::Bind { address: address.clone(), source })?;
    let local = listener.local_addr().map_err(|source| ServerError::Bind { address, source })?;
    let api_key = options.api_key.filter(|k| !k.is_empty());
    check_exposure(&local.ip().to_string(), api_key.as_deref())?;
    let active = Arc::new(AtomicUsize::new(0));
    let state = Arc::new(ServerState {
        source,
        api_key,
        access: access::Access::new(options.access, local.ip()),
        body_limit: options.body_limit,
        responses: options.responses,
        active: active.clone(),
        next_serial: AtomicU64::new(1),
        started: SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs()),
    });
    let (stop, stopped) = oneshot::channel::<()>();
    let app = routes::router(state);
    let task = tokio::spawn(async move {
        let serving = axum::serve(listener, app).with_graceful_shutdown(async {
            let _ = stopped.await;
        });
        if let Err(e) = serving.await {
            tracing::error!("the local server stopped: {e}");
        }
    });
    tracing::info!("local server listening on http://{local}/v1");
    Ok(RunningServer { address: local, active, stop: Some(stop), task })
}
