//! A reply written by a provider's model: the branch sent as OpenAI chat messages (images and
//! audio as content parts where the model is marked to take them), the stream saved and passed
//! on as the same events as a local reply, and every failure kept in the chat with its message.

use std::sync::atomic::AtomicBool;

use confab_media::MediaKind;
use confab_remote::{ChatEvent, ChatRequest, Part, RemoteError, RemoteToolCall, Sampling};
use confab_store::{Message, MessageId, ReplyEnd, ReplyStats, Role, StopReason, Store};

use super::events::{Outcome, RemotePlan, ReplyEvent};
use super::tool_rounds::{self, stopped};
use crate::providers::{error_message, RemoteTarget};
use crate::settings::Settings;
use crate::tools::call::ModelCall;

/// The sampling settings as the API's fields (neutral values are left out by the client); a
/// setting left to the model is not sent, so the provider's model uses its own.
pub fn sampling(settings: &Settings) -> Sampling {
    Sampling {
        temperature: settings.temperature,
        top_p: settings.top_p,
        top_k: settings.top_k.map(|k| k.max(0) as u32),
        min_p: settings.min_p,
        repetition_penalty: settings.repetition_penalty,
        presence_penalty: None,
        max_tokens: Some(settings.max_tokens),
        seed: settings.seed,
        stop: Vec::new(),
    }
}

/// The request for one round: the branch's messages, the sampling settings, the tools.
pub fn request(
    target: &RemoteTarget,
    messages: Vec<confab_remote::Message>,
    settings: &Settings,
    tools: Vec<serde_json::Value>,
) -> ChatRequest {
    ChatRequest { model: target.model.id.clone(), messages, sampling: sampling(settings), tools, tool_choice: None }
}

/// The branch as OpenAI messages: the system prompt, then each turn (failed empty replies left
/// out) with its media as parts when the model takes that kind. A reply that called tools
/// becomes its rounds: the assistant's text with its `tool_calls`, a `tool` message per
/// result (text only, as the API takes it; images a tool returned follow in a user message
/// when the model reads images), and so on.
pub async fn chat_messages(
    store: &Store,
    target: &RemoteTarget,
    system_prompt: &str,
    branch: &[Message],
) -> Result<Vec<confab_remote::Message>, String> {
    let mut messages = Vec::with_capacity(branch.len() + 1);
    if !system_prompt.trim().is_empty() {
        messages.push(confab_remote::Message::text("system", system_prompt));
    }
    for message in branch {
        if message.role == Role::Assistant && !message.tool_calls.is_empty() {
            messages.extend(tool_messages(store, target, message).await?);
            continue;
        }
        if message.role == Role::Assistant && message.content.is_empty() {
            continue;
        }
        let role = match message.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut parts = Vec::new();
        let attachments = store.message_attachments(message.id).await.map_err(|e| e.to_string())?;
        // Documents go in the text, before the words typed, as for a local model.
        // A provider's model is not given scanned pages as images (yet): their text is absent
        // and the document's note says so.
        let documents = crate::attachments::documents::prompt_texts(store, &attachments, false).await.map_err(|e| e.0)?;
        let text = confab_documents::with_documents(&documents, &message.content);
        if !text.is_empty() {
            parts.push(Part::Text(text));
        }
        for attachment in attachments {
            // Earlier turns may hold media this model does not take (sent to another model):
            // they stay in the history but are not sent. Videos have no content part.
            let audio = match MediaKind::of_mime(&attachment.mime) {
                Some(MediaKind::Audio) if target.model.audio => true,
                Some(MediaKind::Image) if target.model.vision => false,
                _ => continue,
            };
            let bytes = read_attachment(store, &attachment).await?;
            parts.push(if audio {
                Part::Audio { format: audio_format(&attachment.mime), bytes }
            } else {
                Part::Image { mime: attachment.mime.clone(), bytes }
            });
        }
        messages.push(confab_remote::Message::new(role, parts));
    }
    Ok(messages)
}

/// A reply's tool rounds as OpenAI messages (see `chat_messages`).
async fn tool_messages(store: &Store, target: &RemoteTarget, reply: &Message) -> Result<Vec<confab_remote::Message>, String> {
    let mut messages = Vec::new();
    for round in tool_rounds::rounds(reply, &reply.tool_calls) {
        if round.calls.is_empty() && round.content.is_empty() {
            continue;
        }
        let calls = round
            .calls
            .iter()
            .map(|call| RemoteToolCall { id: call.call_id.clone(), name: call.tool.clone(), arguments: call.arguments.clone() })
            .collect();
        messages.push(confab_remote::Message::assistant_calls(round.content, calls));
        let mut images = Vec::new();
        for call in &round.calls {
            messages.push(confab_remote::Message::tool_result(call.call_id.clone(), tool_rounds::result_for_model(call)));
            for hash in tool_rounds::result_images(call).iter().filter(|_| target.model.vision) {
                let attachment = store.attachment(hash).await.map_err(|e| e.to_string())?;
                images.push(Part::Image { mime: attachment.mime.clone(), bytes: read_attachment(store, &attachment).await? });
            }
        }
        if !images.is_empty() {
            let mut parts = vec![Part::Text("The images the tools returned:".into())];
            parts.extend(images);
            messages.push(confab_remote::Message::new("user", parts));
        }
    }
    Ok(messages)
}

async fn read_attachment(store: &Store, attachment: &confab_store::Attachment) -> Result<Vec<u8>, String> {
    let path = store.attachment_path(&attachment.hash).await.map_err(|e| e.to_string())?;
    tauri::async_runtime::spawn_blocking(move || std::fs::read(path))
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("Could not read an attachment to send: {e}"))
}

/// OpenAI's `input_audio.format`: the file type's usual extension.
fn audio_format(mime: &str) -> String {
    let subtype = mime.split('/').nth(1).unwrap_or("wav");
    match subtype {
        "wav" | "x-wav" | "wave" | "vnd.wave" => "wav",
        "mpeg" | "mp3" => "mp3",
        "mp4" | "x-m4a" | "m4a" | "aac" => "m4a",
        other => other,
    }
    .to_string()
}

/// Why the provider's model stopped, from OpenAI's `finish_reason`; `None` for one that does
/// not say (or says something else).
fn stop_reason(reason: Option<&str>) -> Option<StopReason> {
    match reason? {
        "stop" | "tool_calls" | "function_call" => Some(StopReason::EndOfTurn),
        "length" => Some(StopReason::TokenLimit),
        _ => None,
    }
}

/// Streams the provider's reply into `reply`, passing each piece to `send`. Stop closes the
/// connection (which ends the server's generation); text that arrived is always kept.
pub async fn generate(
    store: &Store,
    target: &RemoteTarget,
    request: ChatRequest,
    cancel: &AtomicBool,
    reply: MessageId,
    send: &(dyn Fn(ReplyEvent) + Sync),
) -> Outcome {
    let parts = || request.messages.iter().flat_map(|m| &m.parts);
    send(ReplyEvent::Remote {
        plan: RemotePlan {
            provider: target.provider.clone(),
            server: target.client.server().to_string(),
            model: target.model.id.clone(),
            images: parts().filter(|p| matches!(p, Part::Image { .. })).count(),
            clips: parts().filter(|p| matches!(p, Part::Audio { .. })).count(),
        },
    });
    tracing::info!(server = %target.client.server(), messages = request.messages.len(), "reply through a provider");

    let failed = |error: RemoteError| Outcome::ended(ReplyEnd::Error(error_message(&error)));
    let mut stream = tokio::select! {
        opened = target.client.chat(&request) => match opened {
            Ok(stream) => stream,
            Err(error) => return failed(error),
        },
        () = stopped(cancel) => return Outcome::ended(ReplyEnd::Stopped),
    };

    let mut calls = Vec::new();
    loop {
        let event = tokio::select! {
            event = stream.next() => event,
            () = stopped(cancel) => {
                drop(stream); // closes the connection: the server stops generating
                return Outcome::ended(ReplyEnd::Stopped);
            }
        };
        match event {
            // Saved, then shown: the window never shows text that a kill would lose; a piece
            // that could not be saved is not shown either.
            Some(Ok(ChatEvent::Text(text))) => match store.append_reply(reply, &text).await {
                Ok(()) => send(ReplyEvent::Token { text }),
                Err(error) => tracing::warn!(%error, "could not save the reply's text; it is not shown either"),
            },
            Some(Ok(ChatEvent::ToolCalls(made))) => {
                calls.extend(made.into_iter().map(|call| ModelCall {
                    id: Some(call.id),
                    name: call.name,
                    arguments: match serde_json::from_str(&call.arguments) {
                        Ok(serde_json::Value::Object(object)) => Ok(object),
                        _ => Err(call.arguments),
                    },
                }));
            }
            Some(Ok(ChatEvent::Finished(finished))) => {
                let usage = finished.usage.unwrap_or_default();
                let generated = finished.generated_tokens();
                let stats = ReplyStats {
                    prompt_tokens: usage.prompt_tokens as u32,
                    cached_tokens: usage.cached_tokens.unwrap_or(0) as u32,
                    generated_tokens: generated as u32,
                    time_to_first_token_ms: finished.time_to_first_text.map(|t| t.as_millis() as u64),
                    decode_tokens_per_second: finished.tokens_per_second(),
                    model: format!("{} via {}", target.model.id, target.provider),
                    speculative: None,
                    steps_per_canvas: vec![],
                    stop_reason: stop_reason(finished.reason.as_deref()),
                };
                return Outcome { end: ReplyEnd::Complete, stats: Some(stats), calls };
            }
            Some(Err(error)) => {
                let end = match error {
                    RemoteError::Interrupted { .. } => ReplyEnd::Interrupted(error.to_string()),
                    _ => ReplyEnd::Error(error_message(&error)),
                };
                return Outcome::ended(end);
            }
            None => {
                return Outcome::ended(ReplyEnd::Error("the provider's stream ended unexpectedly".into()));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{BufRead, BufReader, Read, Write};
    use std::path::PathBuf;
    use std::process::{Child, Command, Stdio};
    use std::sync::atomic::Ordering;
    use std::sync::Mutex;
    use std::time::{Duration, Instant};

    use confab_secrets::SecretStore;
    use confab_store::{MessageStatus, NewConversation};

    use super::*;
    use crate::providers::{ProviderInput, Providers, RemoteChoice};

    const KEY: &str = "sk-app-remote-test-5b2e";

    /// `confab serve` (the CLI built beside this test) on a free port, with a data folder of
    /// its own (not the user's); killed when dropped.
    struct Serve {
        child: Child,
        base_url: String,
        _home: tempfile::TempDir,
    }

    impl Serve {
        /// `args` name the model (`--model`): the fresh data folder has none.
        fn start(args: &[&str]) -> Serve {
            let home = tempfile::tempdir().unwrap();
            // target/debug/deps/confab_app-… → target/debug/confab
            let binary = std::env::current_exe().unwrap().parent().unwrap().parent().unwrap().join("confab");
            assert!(binary.is_file(), "no {}: build it first (cargo build -p confab-cli)", binary.display());
            let mut child = Command::new(binary)
                .args(["serve", "--port", "0", "--no-prefix-cache", "--no-encoder-cache"])
                .args(args)
                .env("CONFAB_HOME", home.path())
                .stdout(Stdio::piped())
                .stderr(Stdio::inherit())
                .spawn()
                .expect("run confab serve");
            // Printed once the model is loaded and the port is open.
            let mut line = String::new();
            BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
            let base_url = line
                .split_whitespace()
                .find(|w| w.starts_with("http://"))
                .unwrap_or_else(|| panic!("confab serve did not start: {line:?}"));
            Serve { base_url: base_url.to_string(), child, _home: home }
        }

        /// `GET /health`'s count of running requests.
        fn active_requests(&self) -> u64 {
            let address = self.base_url.trim_start_matches("http://").trim_end_matches("/v1");
            let mut socket = std::net::TcpStream::connect(address).unwrap();
            write!(socket, "GET /health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
            let mut answer = String::new();
            socket.read_to_string(&mut answer).unwrap();
            let body: serde_json::Value = serde_json::from_str(&answer[answer.find("\r\n\r\n").unwrap() + 4..]).unwrap();
            body["active_requests"].as_u64().unwrap()
        }
    }

    impl Drop for Serve {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    fn default_model() -> PathBuf {
        let manifest = confab_paths::DefaultModel::manifest();
        let paths = confab_paths::AppPaths::from_env();
        assert!(manifest.is_present(&paths), "the default model is not installed; run scripts/setup.sh");
        manifest.path(&paths)
    }

    /// A store with one question asked, and a provider at `base_url` (its models listed and
    /// the first picked).
    struct Chat {
        _dir: tempfile::TempDir,
        store: Store,
        secrets: SecretStore,
        providers: Providers,
        question: MessageId,
    }

    impl Chat {
        async fn new(base_url: &str, key: &str, question: &str) -> Chat {
            let dir = tempfile::tempdir().unwrap();
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let secrets = SecretStore::file(dir.path());
            let conversation = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
            let question = store.add_message(conversation, None, Role::User, question).await.unwrap();
            let mut providers = Providers::default();
            let input = ProviderInput { id: None, name: "Test box".into(), base_url: base_url.into(), api_key: Some(key.into()) };
            let id = providers.put(input, &store, &secrets).await.unwrap();
            Chat { _dir: dir, store, secrets, providers, question }.with_provider(id).await
        }

        async fn with_provider(mut self, id: u32) -> Chat {
            let (_, client) = self.providers.client(id, &self.secrets).unwrap();
            // A stub that lists nothing (the fault cases) gets one model by hand.
            let listed = client.models().await.unwrap_or_else(|_| {
                vec![confab_remote::RemoteModel { id: "stub".into(), owned_by: None, context_length: None, inputs: None }]
            });
            self.providers.set_models(id, listed.clone(), &self.store).await.unwrap();
            self.providers.select(Some(RemoteChoice { provider: id, model: listed[0].id.clone() }), &self.store).await.unwrap();
            self
        }

        /// One reply through the provider: how it ended, the events sent, the reply as saved.
        async fn reply(&self, max_tokens: u32, stop_after_tokens: Option<usize>) -> (Outcome, Vec<ReplyEvent>, Message) {
            let target = self.providers.target(&self.secrets).unwrap().unwrap();
            let conversation = self.store.message(self.question).await.unwrap().conversation_id;
            let reply = self.store.start_reply(conversation, self.question).await.unwrap();
            let branch = self.store.branch(conversation, self.question).await.unwrap();
            let messages = chat_messages(&self.store, &target, "Be brief.", &branch).await.unwrap();
            let settings = Settings { temperature: Some(0.0), max_tokens, seed: Some(1), ..Settings::default() };
            let request = ChatRequest {
                model: target.model.id.clone(),
                messages,
                sampling: sampling(&settings),
                tools: Vec::new(),
                tool_choice: None,
            };
            let cancel = AtomicBool::new(false);
            let events = Mutex::new(Vec::new());
            let send = |event: ReplyEvent| {
                let mut events = events.lock().unwrap();
                events.push(event);
                let tokens = events.iter().filter(|e| matches!(e, ReplyEvent::Token { .. })).count();
                if stop_after_tokens.is_some_and(|n| tokens >= n) {
                    cancel.store(true, Ordering::Relaxed);
                }
            };
            let outcome = generate(&self.store, &target, request, &cancel, reply, &send).await;
            self.store.finish_reply(reply, outcome.end.clone(), outcome.stats.as_ref()).await.unwrap();
            let saved = self.store.message(reply).await.unwrap();
            (outcome, events.into_inner().unwrap(), saved)
        }
    }

    fn streamed_text(events: &[ReplyEvent]) -> String {
        events.iter().filter_map(|e| if let ReplyEvent::Token { text } = e { Some(text.as_str()) } else { None }).collect()
    }

    #[test]
    fn a_reply_through_confab_serve_streams_stops_and_says_where_it_came_from() {
        let model = default_model();
        let server = Serve::start(&["--model", model.to_str().unwrap(), "--api-key", KEY]);
        tauri::async_runtime::block_on(async {
            let chat = Chat::new(&server.base_url, KEY, "What is the capital of France?").await;
            let (outcome, events, saved) = chat.reply(12, None).await;
            assert_eq!(outcome.end, ReplyEnd::Complete);
            assert!(saved.content.contains("Paris"), "{:?}", saved.content);
            assert_eq!(streamed_text(&events), saved.content, "what streamed is what was saved");
            let ReplyEvent::Remote { plan } = &events[0] else { panic!("the first event is the remote plan: {:?}", events[0]) };
            assert_eq!(
                (plan.provider.as_str(), plan.model.as_str(), plan.images),
                ("Test box", chat.providers.target(&chat.secrets).unwrap().unwrap().model.id.as_str(), 0)
            );
            assert!(server.base_url.starts_with(&plan.server), "{} is the server of {}", plan.server, server.base_url);
            let stats = saved.stats.expect("stats, from the server's usage");
            assert!(stats.prompt_tokens > 10 && stats.generated_tokens > 0, "{stats:?}");
            assert!(stats.model.ends_with("via Test box"), "{}", stats.model);
            assert!(stats.time_to_first_token_ms.is_some());

            // Stop after a few pieces: the text so far is kept, and the server stops generating.
            let (outcome, events, saved) = chat.reply(400, Some(3)).await;
            assert_eq!(outcome.end, ReplyEnd::Stopped);
            assert_eq!(saved.status, MessageStatus::Stopped);
            assert_eq!(streamed_text(&events), saved.content);
            assert!(!saved.content.is_empty());
            let deadline = Instant::now() + Duration::from_secs(60);
            while server.active_requests() != 0 {
                assert!(Instant::now() < deadline, "the server still generates after Stop");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }

            // A wrong key: the server's 401 as a clear message in the chat, without the key.
            let wrong = Chat::new(&server.base_url, "sk-wrong-key", "Hi").await;
            let (outcome, _, saved) = wrong.reply(4, None).await;
            let ReplyEnd::Error(message) = outcome.end else { panic!("{:?}", outcome.end) };
            assert!(message.contains("refused the API key") && !message.contains("sk-wrong-key"), "{message}");
            assert_eq!((saved.status, saved.error.as_deref()), (MessageStatus::Error, Some(message.as_str())));
        });
    }

    /// A stub provider that starts a reply and hangs up mid-stream.
    fn cut_stream_stub() -> String {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        std::thread::spawn(move || {
            // The model list (GET /v1/models) is refused; then the chat is cut.
            for answer in ["HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", ""] {
                let Ok((mut socket, _)) = listener.accept() else { return };
                let mut buffer = [0u8; 65536];
                let _ = socket.read(&mut buffer);
                if !answer.is_empty() {
                    let _ = socket.write_all(answer.as_bytes());
                    continue;
                }
                let chunk =
                    |text: &str| format!("data: {}\n\n", serde_json::json!({ "choices": [{ "index": 0, "delta": { "content": text } }] }));
                let body = format!(
                    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n{}{}",
                    chunk("The answer "),
                    chunk("is")
                );
                let _ = socket.write_all(body.as_bytes());
                let _ = socket.flush();
            }
        });
        format!("http://{address}/v1")
    }

    #[test]
    fn a_stream_cut_mid_reply_keeps_the_text_marked_interrupted() {
        let base_url = cut_stream_stub();
        tauri::async_runtime::block_on(async {
            let chat = Chat::new(&base_url, KEY, "Question?").await;
            let (outcome, events, saved) = chat.reply(16, None).await;
            let ReplyEnd::Interrupted(message) = outcome.end else { panic!("{:?}", outcome.end) };
            assert!(message.contains("closed before the reply was finished"), "{message}");
            assert_eq!((saved.status, saved.content.as_str()), (MessageStatus::Interrupted, "The answer is"));
            assert_eq!(saved.error.as_deref(), Some(message.as_str()));
            assert_eq!(streamed_text(&events), "The answer is");
        });
    }

    #[test]
    fn the_provider_s_finish_reason_says_whether_the_token_limit_cut_the_reply() {
        assert_eq!(stop_reason(Some("length")), Some(StopReason::TokenLimit));
        assert_eq!(stop_reason(Some("stop")), Some(StopReason::EndOfTurn));
        assert_eq!(stop_reason(Some("tool_calls")), Some(StopReason::EndOfTurn));
        assert_eq!(stop_reason(Some("content_filter")), None);
        assert_eq!(stop_reason(None), None);
    }

    #[test]
    fn audio_types_become_openai_formats() {
        assert_eq!(audio_format("audio/x-wav"), "wav");
        assert_eq!(audio_format("audio/mpeg"), "mp3");
        assert_eq!(audio_format("audio/flac"), "flac");
    }

    #[test]
    fn settings_map_to_the_apis_fields() {
        let settings =
            Settings { temperature: Some(0.7), top_p: Some(0.8), max_tokens: 64, seed: Some(3), top_k: Some(-1), ..Settings::default() };
        let body =
            ChatRequest { model: "m".into(), messages: vec![], sampling: sampling(&settings), tools: Vec::new(), tool_choice: None }.body();
        assert_eq!(
            (body["temperature"].as_f64().map(|t| (t * 10.0).round()), body["max_tokens"].as_u64(), body["seed"].as_u64()),
            (Some(7.0), Some(64), Some(3))
        );
        assert_eq!(body["top_p"].as_f64().map(|p| (p * 10.0).round()), Some(8.0));
        assert!(body.get("top_k").is_none(), "a top-k of 0 or less is off");
        let untouched = ChatRequest {
            model: "m".into(),
            messages: vec![],
            sampling: sampling(&Settings::default()),
            tools: Vec::new(),
            tool_choice: None,
        }
        .body();
        assert!(untouched.get("temperature").is_none() && untouched.get("top_p").is_none(), "left to the provider's model");
    }
}
