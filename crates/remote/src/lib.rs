//! confab-remote: a client for OpenAI-compatible chat APIs on other machines (vLLM, SGLang,
//! llama.cpp's server, Ollama, LM Studio, exo, hosted APIs, another Confab's `confab serve`).
//!
//! It lists a provider's models and streams chat replies; every failure is a [`RemoteError`]
//! that says what to do. It knows nothing of the engine, the store or the app.

mod error;
mod request;
mod sse;
mod tool_calls;

use std::sync::Once;
use std::time::{Duration, Instant};

use reqwest::header::{HeaderMap, HeaderValue, AUTHORIZATION, CONTENT_TYPE, RETRY_AFTER};
use serde_json::Value;

pub use error::RemoteError;
pub use request::{ChatRequest, Message, Part, Sampling, MAX_STOPS};
use sse::{SseDecoder, SseEvent};
pub use tool_calls::RemoteToolCall;
use tool_calls::ToolCallDeltas;

/// How long connecting may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long the server may stay silent mid-answer: a large model's prefill on a busy server
/// can take minutes before the first token.
pub const DEFAULT_READ_TIMEOUT: Duration = Duration::from_secs(300);

/// One provider's endpoint and key. `Debug` never shows the key.
#[derive(Clone)]
pub struct Client {
    http: reqwest::Client,
    /// The API's root, such as `http://10.0.0.5:8000/v1` (no trailing slash).
    base: reqwest::Url,
    /// `scheme://host:port`, named in messages (never a path, user name or key).
    server: String,
    read_timeout: Duration,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client").field("base", &self.base.as_str()).finish_non_exhaustive()
    }
}

/// A model a provider lists. What the endpoint says of its inputs, when it says anything.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct RemoteModel {
    pub id: String,
    pub owned_by: Option<String>,
    /// The context length, where the server reports it (vLLM's `max_model_len`, ...).
    pub context_length: Option<u64>,
    /// `Some` when the endpoint lists the model's input kinds (OpenRouter-style
    /// `architecture.input_modalities`); `None`: it does not say, and the user decides.
    pub inputs: Option<Inputs>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Inputs {
    pub vision: bool,
    pub audio: bool,
}

/// Token counts as the server reports them (`stream_options.include_usage`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    /// Prompt tokens the server's prefix cache served, where it reports them.
    pub cached_tokens: Option<u64>,
}

/// What a reply stream yields.
#[derive(Debug, Clone, PartialEq)]
pub enum ChatEvent {
    /// The next piece of the reply.
    Text(String),
    /// The calls the model asked for, put together from the stream's pieces: yielded once, just
    /// before `Finished` (whose reason is then usually `tool_calls`).
    ToolCalls(Vec<RemoteToolCall>),
    /// The reply is complete.
    Finished(Finished),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Finished {
    /// `stop`, `length`, ... as the server says; `None` when it did not.
    pub reason: Option<String>,
    pub usage: Option<Usage>,
    /// Text and tool call pieces received: the token count when the server reports no usage
    /// (most servers send one token per piece).
    pub pieces: u64,
    /// From sending the request to the first text (or tool call piece).
    pub time_to_first_text: Option<Duration>,
    /// From the first text (or tool call piece) to the end.
    pub generating: Duration,
}

impl Finished {
    /// Tokens generated: the server's count, else the pieces received.
    pub fn generated_tokens(&self) -> u64 {
        self.usage.map_or(self.pieces, |u| u.completion_tokens)
    }

    /// Generated tokens per second after the first, as for local replies.
    pub fn tokens_per_second(&self) -> Option<f64> {
        let tokens = self.generated_tokens();
        let seconds = self.generating.as_secs_f64();
        (tokens > 1 && seconds > 0.0).then(|| (tokens - 1) as f64 / seconds)
    }
}

/// rustls needs its cryptography chosen once per process (reqwest is built without a default).
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err only when another part of the process installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

impl Client {
    /// A client for `base_url` (`http://host:port/v1`; a bare `http://host:port` gets `/v1`).
    pub fn new(base_url: &str, api_key: Option<&str>) -> Result<Client, RemoteError> {
        Client::with_read_timeout(base_url, api_key, DEFAULT_READ_TIMEOUT)
    }

    pub fn with_read_timeout(base_url: &str, api_key: Option<&str>, read_timeout: Duration) -> Result<Client, RemoteError> {
        let (base, server) = parse_base_url(base_url)?;
        let mut headers = HeaderMap::new();
        if let Some(key) = api_key.map(str::trim).filter(|k| !k.is_empty()) {
            let mut value = HeaderValue::from_str(&format!("Bearer {key}")).map_err(|_| RemoteError::BadUrl {
                url: base.to_string(),
                reason: "the API key has characters an HTTP header cannot carry".into(),
            })?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
        }
        install_crypto();
        let http = reqwest::Client::builder()
            .default_headers(headers)
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(read_timeout)
            .user_agent(concat!("Confab/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| RemoteError::Tls { server: server.clone(), detail: e.to_string() })?;
        Ok(Client { http, base, server, read_timeout })
    }

    /// `scheme://host:port`: the machine the requests go to.
    pub fn server(&self) -> &str {
        &self.server
    }

    fn url(&self, path: &str) -> String {
        format!("{}/{path}", self.base.as_str().trim_end_matches('/'))
    }

    /// Sends a request; an error status becomes its error (its body read for the message).
    async fn send(&self, request: reqwest::RequestBuilder) -> Result<reqwest::Response, RemoteError> {
        let started = Instant::now();
        let response = request.send().await.map_err(|e| RemoteError::from_transport(&self.server, &e, started.elapsed()))?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let retry_after = response.headers().get(RETRY_AFTER).and_then(|v| v.to_str().ok()).and_then(error::parse_retry_after);
        let body = response.text().await.unwrap_or_default();
        let error = RemoteError::from_status(&self.server, status.as_u16(), retry_after, &body);
        tracing::warn!(server = %self.server, status = status.as_u16(), "provider answered with an error");
        Err(error)
    }

    /// `GET /models`: the models the provider serves.
    pub async fn models(&self) -> Result<Vec<RemoteModel>, RemoteError> {
        let started = Instant::now();
        let response = self.send(self.http.get(self.url("models"))).await?;
        let body = response.text().await.map_err(|e| RemoteError::from_transport(&self.server, &e, started.elapsed()))?;
        let models = models_in(&self.server, &body)?;
        tracing::debug!(server = %self.server, models = models.len(), "listed provider models");
        Ok(models)
    }

    /// `POST /chat/completions` with `stream: true`. The stream is open when this returns; an
    /// error status (a bad key, a rate limit, an unknown model) is returned here.
    pub async fn chat(&self, request: &ChatRequest) -> Result<ChatStream, RemoteError> {
        let started = Instant::now();
        let body = serde_json::to_vec(&request.body())
            .map_err(|e| RemoteError::Malformed { server: self.server.clone(), detail: e.to_string() })?;
        tracing::debug!(server = %self.server, model = %request.model, messages = request.messages.len(), bytes = body.len(), "sending chat request");
        let http = self.http.post(self.url("chat/completions")).header(CONTENT_TYPE, "application/json").body(body);
        let response = self.send(http).await?;
        Ok(ChatStream::new(self.server.clone(), Some(response), started, self.read_timeout))
    }
}

/// The models of a `GET /models` answer, sorted by id, each once.
fn models_in(server: &str, body: &str) -> Result<Vec<RemoteModel>, RemoteError> {
    let malformed = |detail: String| RemoteError::Malformed { server: server.to_string(), detail };
    let json: Value = serde_json::from_str(body).map_err(|e| malformed(format!("the model list is not JSON: {e}")))?;
    let Some(list) = json["data"].as_array() else {
        return Err(malformed("the model list has no `data` array".into()));
    };
    let mut models: Vec<RemoteModel> = list.iter().filter_map(model_of).collect();
    models.sort_by(|a, b| a.id.cmp(&b.id));
    models.dedup_by(|a, b| a.id == b.id);
    Ok(models)
}

/// Parses and normalises the base URL; returns it and the `scheme://host:port` shown in messages.
fn parse_base_url(input: &str) -> Result<(reqwest::Url, String), RemoteError> {
    let trimmed = input.trim();
    let bad = |reason: &str| RemoteError::BadUrl { url: trimmed.to_string(), reason: reason.into() };
    let mut url = reqwest::Url::parse(trimmed).map_err(|e| bad(&e.to_string()))?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(bad("it must start with http:// or https://"));
    }
    let Some(host) = url.host_str().map(str::to_string) else { return Err(bad("it names no host")) };
    if !url.username().is_empty() || url.password().is_some() {
        let _ = (url.set_username(""), url.set_password(None));
        let reason = "it holds a user name or password; put the key in the API key field instead".into();
        return Err(RemoteError::BadUrl { url: url.to_string(), reason });
    }
    url.set_query(None);
    url.set_fragment(None);
    let path = url.path().trim_end_matches('/').to_string();
    url.set_path(if path.is_empty() { "/v1" } else { &path });
    let port = url.port_or_known_default().map_or(String::new(), |p| format!(":{p}"));
    let server = format!("{}://{host}{port}", url.scheme());
    Ok((url, server))
}

/// One entry of `GET /models`; entries without an id are skipped.
fn model_of(entry: &Value) -> Option<RemoteModel> {
    let id = entry["id"].as_str()?.to_string();
    let number = |keys: &[&str]| keys.iter().find_map(|k| entry[*k].as_u64());
    let modalities = [&entry["architecture"]["input_modalities"], &entry["input_modalities"], &entry["modalities"]]
        .into_iter()
        .find_map(|v| v.as_array())
        .map(|list| list.iter().filter_map(Value::as_str).map(str::to_ascii_lowercase).collect::<Vec<_>>());
    Some(RemoteModel {
        id,
        owned_by: entry["owned_by"].as_str().map(str::to_string),
        context_length: number(&["max_model_len", "context_length", "context_window", "max_context_length"]),
        inputs: modalities
            .map(|m| Inputs { vision: m.iter().any(|k| k == "image" || k == "vision"), audio: m.iter().any(|k| k == "audio") }),
    })
}

/// A reply being streamed. Dropping it closes the connection, which stops the server's
/// generation (Stop).
pub struct ChatStream {
    server: String,
    response: Option<reqwest::Response>,
    decoder: SseDecoder,
    queue: std::collections::VecDeque<SseEvent>,
    started: Instant,
    first_text: Option<Instant>,
    pieces: u64,
    reason: Option<String>,
    usage: Option<Usage>,
    tool_calls: ToolCallDeltas,
    /// `Finished`, held back while the tool calls before it are yielded.
    finished: Option<Finished>,
    ended: bool,
    read_timeout: Duration,
}

impl ChatStream {
    fn new(server: String, response: Option<reqwest::Response>, started: Instant, read_timeout: Duration) -> Self {
        ChatStream {
            server,
            response,
            decoder: SseDecoder::default(),
            queue: std::collections::VecDeque::new(),
            started,
            first_text: None,
            pieces: 0,
            reason: None,
            usage: None,
            tool_calls: ToolCallDeltas::default(),
            finished: None,
            ended: false,
            read_timeout,
        }
    }

    /// What a stream yields for a body that came in `pieces`, read as a live stream reads it but
    /// without a connection (the fuzz target `remote_sse`). A stream whose body is all here never
    /// waits, so `next` is polled to its end on the spot.
    fn replay<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<Result<ChatEvent, RemoteError>> {
        use std::future::Future as _;
        let mut stream = ChatStream::new("replay".into(), None, Instant::now(), Duration::ZERO);
        for piece in pieces {
            let events = stream.decoder.feed(piece);
            stream.queue.extend(events);
        }
        let last = stream.decoder.finish();
        stream.queue.extend(last);
        let mut context = std::task::Context::from_waker(std::task::Waker::noop());
        let mut out = Vec::new();
        loop {
            match std::pin::pin!(stream.next()).as_mut().poll(&mut context) {
                std::task::Poll::Ready(Some(event)) => out.push(event),
                // Pending cannot happen without a connection to wait on.
                std::task::Poll::Ready(None) | std::task::Poll::Pending => return out,
            }
        }
    }

    /// The next event; `None` after `Finished` or an error. A cut connection, an event that is
    /// not JSON, or an error event mid-reply is an error after the text already yielded, which
    /// stays valid (tool calls not yet complete are dropped with it).
    pub async fn next(&mut self) -> Option<Result<ChatEvent, RemoteError>> {
        if let Some(finished) = self.finished.take() {
            self.end();
            return Some(Ok(ChatEvent::Finished(finished)));
        }
        if self.ended {
            return None;
        }
        loop {
            while let Some(event) = self.queue.pop_front() {
                match self.on_event(event) {
                    Ok(None) => continue,
                    Ok(Some(ChatEvent::Finished(finished))) => return Some(Ok(self.end_with(finished))),
                    Ok(Some(event)) => return Some(Ok(event)),
                    Err(error) => {
                        self.end();
                        return Some(Err(error));
                    }
                }
            }
            let Some(response) = self.response.as_mut() else {
                // The body ended without `[DONE]`: complete if the server said why it stopped.
                if self.reason.is_some() {
                    let finished = self.finished();
                    return Some(Ok(self.end_with(finished)));
                }
                self.end();
                let detail = "the stream ended without a finish reason".into();
                return Some(Err(RemoteError::Interrupted { server: self.server.clone(), detail }));
            };
            match response.chunk().await {
                Ok(Some(bytes)) => self.queue.extend(self.decoder.feed(&bytes)),
                Ok(None) => {
                    self.response = None;
                    self.queue.extend(self.decoder.finish());
                }
                Err(e) => {
                    self.end();
                    let detail = if e.is_timeout() {
                        format!("no data for {:.1} s", self.read_timeout.as_secs_f64())
                    } else {
                        RemoteError::from_transport(&self.server, &e, Duration::ZERO).to_string()
                    };
                    tracing::warn!(server = %self.server, %detail, "reply stream broke");
                    return Some(Err(RemoteError::Interrupted { server: self.server.clone(), detail }));
                }
            }
        }
    }

    /// The stream's last event: `Finished`, or the tool calls first with `Finished` held back.
    fn end_with(&mut self, finished: Finished) -> ChatEvent {
        if self.tool_calls.is_empty() {
            self.end();
            return ChatEvent::Finished(finished);
        }
        self.finished = Some(finished);
        self.response = None;
        ChatEvent::ToolCalls(self.tool_calls.take())
    }

    fn end(&mut self) {
        self.ended = true;
        self.response = None;
    }

    fn finished(&self) -> Finished {
        let now = Instant::now();
        Finished {
            reason: self.reason.clone(),
            usage: self.usage,
            pieces: self.pieces,
            time_to_first_text: self.first_text.map(|t| t - self.started),
            generating: self.first_text.map_or(Duration::ZERO, |t| now - t),
        }
    }

    /// One server-sent event: text to yield, nothing (role, usage, an empty delta), the end, or
    /// an error.
    fn on_event(&mut self, event: SseEvent) -> Result<Option<ChatEvent>, RemoteError> {
        let malformed = |detail: String| RemoteError::Malformed { server: self.server.clone(), detail };
        let SseEvent::Data(data) = event else { return Err(malformed("an event that is not UTF-8 text".into())) };
        if data.trim() == "[DONE]" {
            return Ok(Some(ChatEvent::Finished(self.finished())));
        }
        let json: Value =
            serde_json::from_str(&data).map_err(|e| malformed(format!("an event that is not JSON ({e}): {}", excerpt(&data))))?;
        if !json["error"].is_null() {
            let message = error::body_message(&data).unwrap_or_else(|| "no explanation given".into());
            return Err(RemoteError::InStream { server: self.server.clone(), message });
        }
        if let Some(usage) = json.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(Usage {
                prompt_tokens: usage["prompt_tokens"].as_u64().unwrap_or(0),
                completion_tokens: usage["completion_tokens"].as_u64().unwrap_or(0),
                cached_tokens: usage["prompt_tokens_details"]["cached_tokens"].as_u64(),
            });
        }
        let Some(choices) = json.get("choices").and_then(Value::as_array) else {
            if json.get("usage").is_some() {
                return Ok(None);
            }
            return Err(malformed(format!("an event with neither choices nor usage: {}", excerpt(&data))));
        };
        let Some(choice) = choices.first() else { return Ok(None) };
        if let Some(reason) = choice["finish_reason"].as_str() {
            self.reason = Some(reason.to_string());
        }
        match &choice["delta"]["tool_calls"] {
            Value::Null => {}
            deltas => {
                self.tool_calls.add(deltas).map_err(|detail| malformed(format!("a tool call delta that cannot be read: {detail}")))?;
                self.pieces += 1;
                self.first_text.get_or_insert_with(Instant::now);
            }
        }
        match &choice["delta"]["content"] {
            Value::String(text) if !text.is_empty() => {
                self.pieces += 1;
                self.first_text.get_or_insert_with(Instant::now);
                Ok(Some(ChatEvent::Text(text.clone())))
            }
            Value::String(_) | Value::Null => Ok(None),
            other => Err(malformed(format!("a delta whose content is not text: {}", excerpt(&other.to_string())))),
        }
    }
}

/// For the fuzz targets (crates/fuzz) only: what the client makes of a provider's bytes.
#[doc(hidden)]
pub mod fuzzing {
    use super::*;

    /// A chat stream's body, arriving in `pieces`.
    pub fn chat_stream<'a>(pieces: impl IntoIterator<Item = &'a [u8]>) -> Vec<Result<ChatEvent, RemoteError>> {
        ChatStream::replay(pieces)
    }

    /// A `GET /models` answer.
    pub fn models(body: &str) -> Result<Vec<RemoteModel>, RemoteError> {
        models_in("fuzz", body)
    }

    /// An error answer: its status, `Retry-After` header and body.
    pub fn error_answer(status: u16, retry_after: &str, body: &str) -> RemoteError {
        RemoteError::from_status("fuzz", status, error::parse_retry_after(retry_after), body)
    }
}

fn excerpt(text: &str) -> String {
    match text.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base_urls_are_normalised_and_checked() {
        let (url, server) = parse_base_url(" http://10.0.0.5:8000/v1/ ").unwrap();
        assert_eq!((url.as_str(), server.as_str()), ("http://10.0.0.5:8000/v1", "http://10.0.0.5:8000"));
        let (url, server) = parse_base_url("https://api.example.com").unwrap();
        assert_eq!((url.as_str(), server.as_str()), ("https://api.example.com/v1", "https://api.example.com:443"));
        assert_eq!(parse_base_url("http://localhost:11434/api/v1?x=1").unwrap().0.as_str(), "http://localhost:11434/api/v1");
        for bad in ["", "localhost:8000", "ftp://h/v1", "http://user:pw@h/v1"] {
            let error = parse_base_url(bad).unwrap_err();
            assert!(matches!(error, RemoteError::BadUrl { .. }), "{bad}: {error}");
            assert!(!error.to_string().contains("pw@"), "a password in the URL is not repeated");
        }
    }

    #[test]
    fn a_replayed_body_gives_text_then_calls_then_the_end() {
        let body = concat!(
            "data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"}}]}\n\n",
            "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"c\",\"function\":{\"name\":\"f\",\"arguments\":\"{}\"}}]},\"finish_reason\":\"tool_calls\"}]}\n\n",
            "data: [DONE]\n\n",
        )
        .as_bytes();
        let events = ChatStream::replay(body.chunks(5));
        assert!(matches!(&events[0], Ok(ChatEvent::Text(text)) if text == "Hi"));
        assert!(matches!(&events[1], Ok(ChatEvent::ToolCalls(calls)) if calls[0].name == "f"));
        assert!(matches!(&events[2], Ok(ChatEvent::Finished(f)) if f.reason.as_deref() == Some("tool_calls")));
        assert_eq!(events.len(), 3);
        // Cut short: an error after what came.
        let cut = ChatStream::replay([&body[..40]]);
        assert!(matches!(cut.last(), Some(Err(RemoteError::Malformed { .. } | RemoteError::Interrupted { .. }))), "{cut:?}");
    }

    #[test]
    fn the_debug_form_hides_the_key() {
        let client = Client::new("http://127.0.0.1:9/v1", Some("sk-secret-123")).unwrap();
        assert!(!format!("{client:?}").contains("sk-secret"));
    }

    #[test]
    fn model_entries_say_what_they_know() {
        let listed = serde_json::json!({ "id": "qwen", "owned_by": "vllm", "max_model_len": 32768,
            "architecture": { "input_modalities": ["text", "image"] } });
        let model = model_of(&listed).unwrap();
        assert_eq!((model.context_length, model.inputs), (Some(32768), Some(Inputs { vision: true, audio: false })));
        let bare = model_of(&serde_json::json!({ "id": "llama" })).unwrap();
        assert_eq!((bare.context_length, bare.inputs), (None, None), "an endpoint that does not say leaves it to the user");
        assert!(model_of(&serde_json::json!({ "object": "model" })).is_none());
    }
}
