//! confab-server: a local OpenAI-compatible HTTP API on Confab's engine, for editors, agents,
//! scripts and notebooks. `confab serve` and the app both start it; it never touches the chat
//! history (server requests are not conversations).
//!
//! Endpoints: `POST /v1/chat/completions`, `POST /v1/completions` (whole or streamed as
//! server-sent events), OpenAI's Responses (`POST /v1/responses`, `POST
//! /v1/responses/input_tokens`, `GET` and `DELETE /v1/responses/{id}`, `GET
//! /v1/responses/{id}/input_items`; kept responses live in the history database's own table),
//! Anthropic's `POST /v1/messages` and `POST /v1/messages/count_tokens`, `POST /v1/embeddings`
//! (from an embedding model, named like any other), `GET /v1/models` (every model a request may
//! name, loaded or not), LM Studio's `POST /api/v1/models/load` and `unload`, `GET /health`;
//! and Ollama's API on the same engine and turn: `POST /api/chat` and `POST /api/generate`
//! (NDJSON streams by default, or one object), `POST /api/embed` and the legacy `POST
//! /api/embeddings`, `GET /api/tags`, `GET /api/ps`, `POST /api/show`, `GET /api/version`, and
//! `POST /api/pull` (from the Hugging Face hub, as `confab pull`). Every error is in the shape
//! of its endpoint's API. A request may name any model Confab finds: `pool` loads it, under one
//! limit for the loaded models' weights.
//!
//! Layout: `access` (who may call) and `routes` (every endpoint) stand in front; each API has its
//! folder (`chat_completions/`, with the legacy Completions; `messages/`; `responses/`;
//! `ollama/`), each folder a `request` (the wire request into the engine's), a `render` (the
//! answer in that API's shape, whole and streamed) and its `routes`; `embeddings` and `models`
//! (the listing, loading and unloading) are one file each; `pool` holds the loaded models;
//! `shared/` is what the APIs all stand on (the turn, the error shape, bodies, media files, a
//! running request).

mod access;
mod chat_completions;
mod embeddings;
/// For the fuzz targets (crates/fuzz) only.
#[doc(hidden)]
pub mod fuzzing;
mod messages;
mod models;
mod ollama;
mod pool;
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
pub use pool::{FindModels, KeepAlive, ListedModel, LoadedState, ModelPool, PoolError, PoolOptions};
pub use shared::error::{ApiError, ServerError};

/// Loopback only, unless the user asks for more.
pub const DEFAULT_HOST: &str = "127.0.0.1";
pub const DEFAULT_PORT: u16 = 8080;
/// Room for a few photos or a clip, base64-encoded (`server.body_bytes`).
pub const DEFAULT_BODY_LIMIT: usize = confab_limits::SERVER_BODY_BYTES.as_usize();

/// Where the server gets its engine and models: `confab serve` runs a `ModelPool`; the app
/// serves its chat model and, through a pool of its own, any other model a request names.
pub trait ModelSource: Send + Sync + 'static {
    fn engine(&self) -> &Engine;
    /// Every model a request may name, loaded or not (`GET /v1/models`; finding them walks
    /// folders on disk).
    fn models(&self) -> Vec<ListedModel>;
    /// The models loaded now.
    fn loaded(&self) -> Vec<ListedModel>;
    /// The model `asked` names (its name or path), for a request: loaded first when it is not.
    /// Blocks while it loads (seconds to minutes); the server calls it off its async workers.
    fn acquire(&self, asked: &str) -> Result<ServedModel, PoolError>;
    /// How long `asked` stays loaded once idle (Ollama's `keep_alive`); a model not loaded is
    /// left alone.
    fn keep_alive(&self, asked: &str, keep_alive: KeepAlive) -> Result<(), PoolError>;
}

impl ModelSource for ModelPool {
    fn engine(&self) -> &Engine {
        ModelPool::engine(self)
    }

    fn models(&self) -> Vec<ListedModel> {
        ModelPool::models(self)
    }

    fn loaded(&self) -> Vec<ListedModel> {
        ModelPool::loaded(self)
    }

    fn acquire(&self, asked: &str) -> Result<ServedModel, PoolError> {
        ModelPool::acquire(self, asked)
    }

    fn keep_alive(&self, asked: &str, keep_alive: KeepAlive) -> Result<(), PoolError> {
        ModelPool::keep_alive(self, asked, keep_alive)
    }
}

/// A loaded model, and the name clients call it by (`GET /v1/models`). While a request holds
/// it (or a clone), its pool does not unload it.
#[derive(Debug, Clone)]
pub struct ServedModel {
    pub id: ModelId,
    pub name: String,
    pub info: ModelInfo,
    /// The draft model loaded beside it, for requests that ask for `"speculative": "draft_model"`.
    pub draft: Option<ModelId>,
    users: Arc<()>,
}

impl ServedModel {
    pub fn new(id: ModelId, name: String, info: ModelInfo, draft: Option<ModelId>) -> Self {
        Self { id, name, info, draft, users: Arc::new(()) }
    }

    /// Whether a request's `model` names it: its name or its path.
    pub fn answers_to(&self, asked: &str) -> bool {
        self.name == asked || self.info.path.to_str() == Some(asked)
    }

    /// How many hold it (its pool's own entry among them).
    fn users(&self) -> usize {
        Arc::strong_count(&self.users)
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
    /// The chat model the request names, loaded for it.
    pub(crate) async fn served(self: &Arc<Self>, asked: Option<&str>) -> Result<ServedModel, ApiError> {
        let asked = asked
            .ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /v1/models lists the models this server runs."))?;
        let model = self.acquire(asked).await?;
        if model.info.embedding.is_some() {
            return Err(ApiError::embedding_only(&model.name));
        }
        Ok(model)
    }

    /// The embedding model the request names, loaded for it.
    pub(crate) async fn embedder(self: &Arc<Self>, asked: Option<&str>) -> Result<ServedModel, ApiError> {
        let asked = asked
            .ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /v1/models lists the models this server runs."))?;
        let model = self.acquire(asked).await?;
        if model.info.embedding.is_none() {
            let embedders: Vec<String> = self.source.models().into_iter().filter(ListedModel::is_embedding).map(|m| m.name).collect();
            return Err(ApiError::not_an_embedder(asked, &embedders));
        }
        Ok(model)
    }

    /// The model `asked` names, from the source (loading it, off the async workers).
    pub(crate) async fn acquire(self: &Arc<Self>, asked: &str) -> Result<ServedModel, ApiError> {
        let (state, asked) = (self.clone(), asked.to_string());
        tokio::task::spawn_blocking(move || state.source.acquire(&asked))
            .await
            .map_err(|e| ApiError::internal(format!("loading the model failed: {e}")))?
            .map_err(ApiError::from)
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
        let ids = tokio::task::spawn_blocking(move || counting.source.engine().tokenize_chat(model, prompt, chat))
            .await
            .map_err(|e| ApiError::internal(format!("counting failed: {e}")))??;
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
