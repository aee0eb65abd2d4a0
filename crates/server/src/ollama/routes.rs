//! Ollama's endpoints on the same engine and turn as the other APIs: `/api/chat` and
//! `/api/generate` (NDJSON streams by default), `/api/embed` and `/api/embeddings`,
//! `/api/tags`, `/api/ps`, `/api/show`, `/api/version`, and `/api/pull` from the Hugging Face
//! hub. Every error is `{"error": "..."}` (`render::OllamaError`).
//!
//! The models this API lists and finds go through two functions, [`listed`] and [`lookup`], and
//! `keep_alive` through [`keep_alive`]: the server's model source (its pool) decides what is
//! loaded, and these are the places that ask it.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::rejection::BytesRejection;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Json;
use confab_engine::{EmbedPrompt, EngineError};
use confab_hub::{HubClient, HubError, HubOptions, Progress, PullOptions};
use confab_turn::WholeReply;
use serde_json::{json, Value};
use tokio::sync::mpsc;

use super::render::{self, error_body, Endpoint, OllamaError, Reply, OLLAMA_API_VERSION};
use super::request::{ChatRequest, EmbedRequest, GenerateRequest, PullRequest, ShowRequest, OLLAMA_REFERENCE};
use crate::shared::body::parse;
use crate::shared::error::ApiError;
use crate::shared::running;
use crate::shared::turn::{ChatTurn, Turn, TurnEvent};
use crate::{KeepAlive, ListedModel, ServedModel, ServerState};

/// Whether a path is one of Ollama's API, whose errors take Ollama's shape (LM Studio's
/// `/api/v1/...` is not).
pub fn is_ollama_path(path: &str) -> bool {
    (path == "/api" || path.starts_with("/api/")) && !path.starts_with("/api/v1/")
}

/// Every model a request may name, loaded or not, as `/api/tags` lists them (finding them
/// walks folders on disk, off the async workers).
pub(crate) async fn listed(state: &Arc<ServerState>) -> Result<Vec<ListedModel>, ApiError> {
    let listing = state.clone();
    tokio::task::spawn_blocking(move || listing.source.models())
        .await
        .map_err(|e| ApiError::internal(format!("listing the models failed: {e}")))
}

/// The chat model a request names, loaded for it. Ollama's names carry a tag (`llama3.2` is
/// `llama3.2:latest`), so a name is also found with `:latest` added or taken off.
pub(crate) async fn lookup(state: &Arc<ServerState>, asked: Option<&str>) -> Result<ServedModel, ApiError> {
    let asked = asked
        .filter(|a| !a.is_empty())
        .ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /api/tags lists the models this server runs."))?;
    let first = state.served(Some(asked)).await;
    if first.as_ref().is_err_and(|e| e.code == Some("model_not_found")) {
        for name in alternate_names(asked) {
            if let Ok(found) = state.served(Some(&name)).await {
                return Ok(found);
            }
        }
    }
    first.map_err(|e| in_ollamas_words(e, asked))
}

/// Ollama's `keep_alive` for a model the request holds: how long it stays loaded once idle
/// (0: unload once idle; negative: stay).
pub(crate) async fn keep_alive(state: &Arc<ServerState>, model_name: &str, keep: KeepAlive) -> Result<(), ApiError> {
    let (pool, name) = (state.clone(), model_name.to_string());
    tokio::task::spawn_blocking(move || pool.source.keep_alive(&name, keep))
        .await
        .map_err(|e| ApiError::internal(format!("setting keep_alive failed: {e}")))?
        .map_err(ApiError::from)
}

/// `name:latest` for `name`, and `name` for `name:latest`.
fn alternate_names(asked: &str) -> impl Iterator<Item = String> {
    let name = asked.rsplit_once('/').map_or(asked, |(_, last)| last);
    let alternate = match asked.strip_suffix(":latest") {
        Some(bare) => Some(bare.to_string()),
        None if !name.contains(':') => Some(format!("{asked}:latest")),
        None => None,
    };
    alternate.into_iter()
}

/// An unknown model, or an embedding model asked to chat, in the words of this API (its list is
/// `/api/tags`, its vectors come from `/api/embed`; more models come from the hub).
fn in_ollamas_words(error: ApiError, asked: &str) -> ApiError {
    // `ApiError::embedding_only`'s words.
    if error.message.contains("is an embedding model") {
        return error.with_message(format!(
            "\"{asked}\" is an embedding model: it answers POST /api/embed, not chat or generate. Ask a chat model for those (GET /api/tags lists what this server runs)."
        ));
    }
    if error.code != Some("model_not_found") {
        return error;
    }
    let message = format!(
        "model \"{asked}\" not found: {} To add one, pull it from the Hugging Face hub (POST /api/pull with \"hf.co/owner/name\").",
        error.message.replace("GET /v1/models", "GET /api/tags")
    );
    error.with_message(message)
}

/// A model's reply as Ollama answers it: one object, or NDJSON lines as it comes.
async fn reply(turn: Turn, reply: Reply, stream: bool) -> Result<Response, ApiError> {
    if stream {
        return Ok(ndjson(reply_lines(turn, reply)));
    }
    let mut turn = turn;
    let mut whole = WholeReply::default();
    while let Some(event) = turn.next().await {
        match event? {
            TurnEvent::Done { reason, usage, timings } => return Ok(Json(reply.whole(&whole, reason, &usage, &timings)).into_response()),
            event => whole.add(&event),
        }
    }
    Err(EngineError::EngineStopped.into())
}

/// The reply's lines: text, reasoning and each call as they come, then the counts. The turn is
/// dropped with the stream when the client leaves, which stops the generation.
fn reply_lines(turn: Turn, reply: Reply) -> impl futures_util::Stream<Item = Result<Bytes, Infallible>> {
    futures_util::stream::unfold(Some((turn, reply)), |state| async move {
        let (mut turn, reply) = state?;
        loop {
            let value = match turn.next().await? {
                Ok(TurnEvent::Text(text)) if !text.is_empty() => reply.text(&text),
                Ok(TurnEvent::Reasoning(text)) if !text.is_empty() => reply.thinking(&text),
                Ok(TurnEvent::ToolCall { id, name, arguments }) => reply.call(&id, &name, &arguments),
                Ok(TurnEvent::Done { reason, usage, timings }) => return Some((Ok(line(&reply.done(reason, &usage, &timings))), None)),
                Ok(_) => continue,
                // The status is sent: an error mid-stream is a last line in the error shape.
                Err(e) => return Some((Ok(line(&error_body(&e))), None)),
            };
            return Some((Ok(line(&value)), Some((turn, reply))));
        }
    })
}

fn line(value: &Value) -> Bytes {
    let mut text = value.to_string();
    text.push('\n');
    Bytes::from(text)
}

fn ndjson(lines: impl futures_util::Stream<Item = Result<Bytes, Infallible>> + Send + 'static) -> Response {
    ([(header::CONTENT_TYPE, "application/x-ndjson")], Body::from_stream(lines)).into_response()
}

/// `keep_alive` as the request sent it, handed on; whether it asked to unload.
async fn apply_keep_alive(state: &Arc<ServerState>, model: &ServedModel, keep: Option<KeepAlive>) -> Result<bool, ApiError> {
    let Some(keep) = keep else { return Ok(false) };
    keep_alive(state, &model.name, keep).await?;
    Ok(keep == KeepAlive::Idle(Duration::ZERO))
}

/// Runs a turn and answers it.
async fn run_turn(state: &ServerState, model: &ServedModel, turn: ChatTurn, reply_to: Reply, stream: bool) -> Result<Response, ApiError> {
    let engine_request = turn.request(&model.info, model.id)?;
    let running = running::start(state.source.engine(), model, engine_request, state.active.clone()).await?;
    reply(Turn::new(running, &model.info, &turn.tools), reply_to, stream).await
}

pub async fn chat(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let started = Instant::now();
    let answer = async {
        let request: ChatRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let finding = Instant::now();
        let model = lookup(&state, request.model.as_deref()).await?;
        let load = finding.elapsed();
        let unload = apply_keep_alive(&state, &model, request.common.keep_alive()?).await?;
        let reply_to = Reply::new(Endpoint::Chat, model.name.clone(), started, load);
        // No messages: Ollama's way to load (or, with keep_alive 0, unload) a model.
        if request.messages.is_empty() {
            return Ok(Json(reply_to.loaded(if unload { "unload" } else { "load" })).into_response());
        }
        let turn = request.turn(&model.info, &model.name).map_err(in_ollamas_fields)?;
        run_turn(&state, &model, turn, reply_to, request.common.stream).await.map_err(in_ollamas_fields)
    };
    answer.await.unwrap_or_else(|e| OllamaError(e).into_response())
}

pub async fn generate(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let started = Instant::now();
    let answer = async {
        let request: GenerateRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let finding = Instant::now();
        let model = lookup(&state, request.model.as_deref()).await?;
        let load = finding.elapsed();
        let unload = apply_keep_alive(&state, &model, request.common.keep_alive()?).await?;
        let reply_to = Reply::new(Endpoint::Generate, model.name.clone(), started, load);
        // An empty prompt: Ollama's way to load (or, with keep_alive 0, unload) a model.
        if request.prompt.is_empty() && request.images.is_empty() {
            request.refused_fields()?;
            return Ok(Json(reply_to.loaded(if unload { "unload" } else { "load" })).into_response());
        }
        let turn = request.turn(&model.info, &model.name).map_err(in_ollamas_fields)?;
        run_turn(&state, &model, turn, reply_to, request.common.stream).await.map_err(in_ollamas_fields)
    };
    answer.await.unwrap_or_else(|e| OllamaError(e).into_response())
}

/// The turn layer's and the engine's errors name OpenAI's fields; these are Ollama's (a reply's
/// length is `options.num_predict`, also in the remedy a memory error gives).
fn in_ollamas_fields(error: ApiError) -> ApiError {
    let error = if error.param.as_deref() == Some("max_tokens") {
        let message = error.message.replace("max_tokens", "options.num_predict");
        error.with_message(message)
    } else {
        error
    };
    error.with_param_renamed("response_format", "format").with_param_renamed("max_tokens", "options.num_predict")
}

pub async fn tags(State(state): State<Arc<ServerState>>) -> Response {
    match listed(&state).await {
        Ok(models) => Json(json!({ "models": models.iter().map(render::tag).collect::<Vec<_>>() })).into_response(),
        Err(e) => OllamaError(e).into_response(),
    }
}

/// The loaded models.
pub async fn ps(State(state): State<Arc<ServerState>>) -> Response {
    let models: Vec<Value> = state.source.loaded().iter().map(render::running).collect();
    Json(json!({ "models": models })).into_response()
}

pub async fn version() -> Response {
    Json(json!({ "version": OLLAMA_API_VERSION })).into_response()
}

pub async fn show(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: ShowRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let asked = request
            .model()
            .filter(|m| !m.is_empty())
            .ok_or_else(|| ApiError::invalid(Some("model"), "model is required; GET /api/tags lists the models this server runs."))?;
        let models = listed(&state).await?;
        let answers_to = |m: &ListedModel, name: &str| m.name == name || m.path.to_str() == Some(name);
        let found = std::iter::once(asked.to_string())
            .chain(alternate_names(asked))
            .find_map(|name| models.iter().find(|m| answers_to(m, &name)).cloned());
        match found {
            Some(model) => Ok(Json(render::show(&model)).into_response()),
            None => Err(in_ollamas_words(
                ApiError::from(crate::PoolError::Unknown {
                    asked: asked.to_string(),
                    available: models.iter().map(|m| m.name.clone()).collect(),
                }),
                asked,
            )),
        }
    };
    answer.await.unwrap_or_else(|e: ApiError| OllamaError(e).into_response())
}

/// `/api/embed`: `input` (a string or strings) to `embeddings`, as the model gives them.
pub async fn embed(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let started = Instant::now();
    let answer = async {
        let request: EmbedRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let model = state
            .embedder(request.model.as_deref())
            .await
            .map_err(|e| in_ollamas_words(e, request.model.as_deref().unwrap_or_default()))?;
        let load = started.elapsed();
        let keep = request.keep_alive()?;
        apply_keep_alive(&state, &model, keep).await?;
        if request.truncate == Some(true) {
            tracing::info!("Ollama embed: truncate not done: an input longer than the model's limit is refused, not cut");
        }
        if request.options.is_some() {
            tracing::info!("Ollama embed: options ignored (an embedding has no sampling)");
        }
        let texts = request.texts()?;
        let (vectors, prompt_tokens) = crate::embeddings::vectors(&state, &model, texts, EmbedPrompt::Document, request.dimensions).await?;
        let total = started.elapsed().as_nanos() as u64;
        Ok(Json(json!({
            "model": model.name,
            "embeddings": vectors,
            "total_duration": total,
            "load_duration": load.as_nanos() as u64,
            "prompt_eval_count": prompt_tokens,
        }))
        .into_response())
    };
    answer.await.unwrap_or_else(|e| OllamaError(e).into_response())
}

/// The legacy `/api/embeddings`: one `prompt` to one `embedding`.
pub async fn embeddings(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: EmbedRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let model = state
            .embedder(request.model.as_deref())
            .await
            .map_err(|e| in_ollamas_words(e, request.model.as_deref().unwrap_or_default()))?;
        let prompt = request.prompt.unwrap_or_default();
        // As Ollama answers it: nothing to embed, no vector.
        if prompt.is_empty() {
            return Ok(Json(json!({ "embedding": [] })).into_response());
        }
        let (mut vectors, _) = crate::embeddings::vectors(&state, &model, vec![prompt], EmbedPrompt::Document, None).await?;
        Ok(Json(json!({ "embedding": vectors.pop().unwrap_or_default() })).into_response())
    };
    answer.await.unwrap_or_else(|e: ApiError| OllamaError(e).into_response())
}

/// A pull's cancel flag, set when the pull's answer is dropped (the client left): the download
/// stops, and what it had is kept for the next pull to resume.
struct CancelOnDrop(Arc<AtomicBool>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Relaxed);
    }
}

/// `/api/pull`: a model from the Hugging Face hub (or `HF_ENDPOINT`) into the Hugging Face cache,
/// as `confab pull` downloads it, with progress as Ollama's status lines.
pub async fn pull(State(state): State<Arc<ServerState>>, body: Result<Bytes, BytesRejection>) -> Response {
    let answer = async {
        let request: PullRequest = parse(body, state.body_limit, OLLAMA_REFERENCE)?;
        let (repo, tag) = hub_repo(request.model().unwrap_or_default())?;
        let client = HubClient::new(HubOptions::from_env(None, None)).map_err(hub_error)?;
        // The repository's files first, so that a name the hub does not know is a 404 before
        // any line is sent.
        let info = client.model_info(&repo).await.map_err(hub_error)?;
        let mut options = PullOptions::new(
            confab_paths::AppPaths::hf_hub_cache(),
            |config| confab_engine::runs_here(confab_engine::Architecture::Config(config)),
            |architecture| confab_engine::runs_here(confab_engine::Architecture::Gguf(architecture)),
            confab_engine::supported_architectures(),
        );
        if let Some(tag) = tag {
            options.files = vec![gguf_for_tag(&repo, &info, &tag)?];
        }
        let digests: HashMap<String, String> =
            info.siblings.iter().filter_map(|f| f.checksum().map(|c| (f.name.clone(), digest(&c)))).collect();
        let cancel = CancelOnDrop(options.cancel.clone());
        let (lines, received) = mpsc::unbounded_channel::<Value>();
        let _ = lines.send(json!({ "status": "pulling manifest" }));
        let download = tokio::spawn(async move {
            let mut progress = ProgressLines::new(lines.clone(), digests);
            let pulled = confab_hub::pull(&client, &repo, &options, |p| progress.show(p)).await;
            match pulled {
                Ok(pulled) => {
                    tracing::info!(repo, path = %pulled.model_path.display(), "pulled through Ollama's API");
                    let _ = lines.send(json!({ "status": "success" }));
                    Ok(())
                }
                Err(e) => Err(hub_error(e)),
            }
        });
        if !request.stream {
            let _cancel = cancel;
            return match download.await {
                Ok(Ok(())) => Ok(Json(json!({ "status": "success" })).into_response()),
                Ok(Err(e)) => Err(e),
                Err(e) => Err(ApiError::invalid(None, format!("the download stopped: {e}")).with_status(StatusCode::INTERNAL_SERVER_ERROR)),
            };
        }
        let stream = futures_util::stream::unfold(Some((received, download, cancel)), |state| async move {
            let (mut received, download, cancel) = state?;
            if let Some(value) = received.recv().await {
                return Some((Ok(line(&value)), Some((received, download, cancel))));
            }
            // Every sender is gone: the download ended; a failure is the last line.
            match download.await {
                Ok(Ok(())) => None,
                Ok(Err(e)) => Some((Ok(line(&error_body(&e))), None)),
                Err(e) => Some((Ok(line(&json!({ "error": format!("the download stopped: {e}") }))), None)),
            }
        });
        Ok(ndjson(stream))
    };
    answer.await.unwrap_or_else(|e: ApiError| OllamaError(e).into_response())
}

/// Progress as Ollama's lines, `{"status": "pulling <file>", "digest", "total", "completed"}`,
/// a few a second per file and always its last.
struct ProgressLines {
    lines: mpsc::UnboundedSender<Value>,
    digests: HashMap<String, String>,
    last: Option<(String, Instant)>,
}

impl ProgressLines {
    fn new(lines: mpsc::UnboundedSender<Value>, digests: HashMap<String, String>) -> Self {
        Self { lines, digests, last: None }
    }

    fn show(&mut self, p: &Progress) {
        let finished = p.file_bytes >= p.file_size;
        let recent = self.last.as_ref().is_some_and(|(file, at)| *file == p.file && at.elapsed() < Duration::from_millis(250));
        if recent && !finished {
            return;
        }
        self.last = Some((p.file.clone(), Instant::now()));
        let status = if p.waiting { format!("waiting for another download of {}", p.file) } else { format!("pulling {}", p.file) };
        let digest = self.digests.get(&p.file).cloned().unwrap_or_default();
        let _ = self.lines.send(json!({ "status": status, "digest": digest, "total": p.file_size, "completed": p.file_bytes }));
    }
}

/// A file's checksum as a digest: `sha256:<hex>` (LFS files), `sha1:<hex>` (git's blob id).
fn digest(checksum: &confab_hub::api::Checksum) -> String {
    match checksum {
        confab_hub::api::Checksum::Sha256(hex) => format!("sha256:{hex}"),
        confab_hub::api::Checksum::GitSha1(hex) => format!("sha1:{hex}"),
    }
}

/// A model name as Ollama's clients write one for the hub: `hf.co/owner/name[:tag]`,
/// `huggingface.co/owner/name`, or `owner/name`. The tag picks a GGUF file (`Q4_K_M`);
/// `latest` is none.
pub(crate) fn hub_repo(name: &str) -> Result<(String, Option<String>), ApiError> {
    let trimmed = name.trim().trim_start_matches("https://").trim_start_matches("http://");
    let bare = ["hf.co/", "huggingface.co/"].iter().find_map(|host| trimmed.strip_prefix(host)).unwrap_or(trimmed);
    let (repo, tag) = match bare.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, Some(tag)),
        _ => (bare, None),
    };
    let parts: Vec<&str> = repo.split('/').collect();
    let valid =
        parts.len() == 2 && parts.iter().all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c)));
    if name.trim().is_empty() {
        return Err(ApiError::invalid(Some("model"), "model is required: a Hugging Face repository such as hf.co/owner/name."));
    }
    if !valid || trimmed.starts_with("registry.ollama.ai/") {
        return Err(ApiError::invalid(
            Some("model"),
            format!("`{name}` is not a Hugging Face repository. This server pulls from the Hugging Face hub, not Ollama's registry: name a repository as hf.co/owner/name (or owner/name), with :TAG to pick one GGUF file (such as :Q4_K_M)."),
        ));
    }
    Ok((repo.to_string(), tag.filter(|t| !t.is_empty() && *t != "latest").map(str::to_string)))
}

/// The one GGUF file of `repo` a tag names (`Q4_K_M` matches `model-Q4_K_M.gguf`).
fn gguf_for_tag(repo: &str, info: &confab_hub::RepoInfo, tag: &str) -> Result<String, ApiError> {
    let ggufs: Vec<&str> = info.siblings.iter().map(|f| f.name.as_str()).filter(|n| n.to_ascii_lowercase().ends_with(".gguf")).collect();
    let wanted = tag.to_ascii_lowercase();
    let matching: Vec<&str> = ggufs.iter().copied().filter(|n| n.to_ascii_lowercase().contains(&wanted)).collect();
    match matching.as_slice() {
        [one] => Ok(one.to_string()),
        [] => Err(ApiError::invalid(
            Some("model"),
            format!(
                "{repo} has no GGUF file matching the tag `{tag}` (its GGUF files: {}). Name one of them as the tag, or leave the tag out.",
                if ggufs.is_empty() { "none".into() } else { ggufs.join(", ") }
            ),
        )
        .with_status(StatusCode::NOT_FOUND)),
        several => Err(ApiError::invalid(
            Some("model"),
            format!(
                "the tag `{tag}` matches {} GGUF files of {repo} ({}); name one of them whole as the tag.",
                several.len(),
                several.join(", ")
            ),
        )),
    }
}

/// A hub error with the status it deserves; its words already say what to do.
fn hub_error(error: HubError) -> ApiError {
    let status = match &error {
        HubError::RepoName(_) | HubError::UnsupportedArchitecture { .. } | HubError::NoModelFiles { .. } | HubError::ChooseFile { .. } => {
            StatusCode::BAD_REQUEST
        }
        HubError::RepoNotFound { .. } | HubError::FileNotFound { .. } => StatusCode::NOT_FOUND,
        HubError::Gated { .. } | HubError::Refused { .. } => StatusCode::FORBIDDEN,
        HubError::DiskSpace { .. } | HubError::DiskFull { .. } => StatusCode::INSUFFICIENT_STORAGE,
        HubError::Unreachable { .. } | HubError::Network { .. } | HubError::Http { .. } | HubError::BadAnswer { .. } => {
            StatusCode::BAD_GATEWAY
        }
        _ => StatusCode::INTERNAL_SERVER_ERROR,
    };
    ApiError::invalid(Some("model"), error.to_string()).with_status(status)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hub_names_as_ollamas_clients_write_them() {
        let repo = |name: &str| hub_repo(name).unwrap();
        assert_eq!(repo("hf.co/owner/model"), ("owner/model".into(), None));
        assert_eq!(repo("huggingface.co/owner/model-GGUF:Q4_K_M"), ("owner/model-GGUF".into(), Some("Q4_K_M".into())));
        assert_eq!(repo("https://hf.co/owner/model:latest"), ("owner/model".into(), None));
        assert_eq!(repo("owner/model.v2"), ("owner/model.v2".into(), None));
        for bad in ["llama3.2", "llama3.2:3b", "registry.ollama.ai/library/llama3", "a/b/c", "", "own er/model"] {
            let error = hub_repo(bad).unwrap_err();
            assert_eq!((error.status, error.param.as_deref()), (StatusCode::BAD_REQUEST, Some("model")), "{bad}");
        }
    }

    #[test]
    fn names_with_and_without_latest() {
        assert_eq!(alternate_names("lfm2").collect::<Vec<_>>(), ["lfm2:latest"]);
        assert_eq!(alternate_names("lfm2:latest").collect::<Vec<_>>(), ["lfm2"]);
        assert_eq!(alternate_names("lfm2:tiny").count(), 0);
        assert_eq!(alternate_names("hf.co/someone/SmolLM3-GGUF").collect::<Vec<_>>(), ["hf.co/someone/SmolLM3-GGUF:latest"]);
    }

    #[test]
    fn errors_name_ollamas_fields() {
        let memory = in_ollamas_fields(ApiError::invalid(Some("max_tokens"), "needs 3 GiB; lower max_tokens or raise the budget"));
        assert_eq!(
            (memory.param.as_deref(), memory.message.as_str()),
            (Some("options.num_predict"), "needs 3 GiB; lower options.num_predict or raise the budget")
        );
        assert_eq!(in_ollamas_fields(ApiError::invalid(Some("response_format"), "no")).param.as_deref(), Some("format"));
    }

    #[test]
    fn ollama_paths() {
        assert!(is_ollama_path("/api/chat"));
        assert!(is_ollama_path("/api/nope"));
        assert!(!is_ollama_path("/v1/chat/completions"));
        assert!(!is_ollama_path("/apix"));
        assert!(!is_ollama_path("/api/v1/models/load"));
    }
}
