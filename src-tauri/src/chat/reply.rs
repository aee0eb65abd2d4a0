//! One assistant reply: saved as it streams, sent to the window through a Channel, and kept
//! (marked stopped, error or interrupted) however it ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use confab_engine::{Generation, ModelInfo, Prompt};
use confab_media::MediaKind;
use confab_store::{Attachment, Conversation, ConversationId, Message, MessageId, ReplyEnd, ReplySource, Role, Store};
use confab_turn::{ToolChoice, Tools};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter};

use super::document_search::{self, DocumentPrompt, IndexProgress};
use super::local_model;
use super::remote_model;
use super::tool_rounds::{self, RoundEnd, Toolbox};
use super::turns::system_prompt;
use super::views::message_view;
use crate::attachments::documents;
use crate::desktop::web_view_priority;
use crate::failure::Failure;
use crate::models::slot::Current;
use crate::providers::RemoteTarget;
use crate::settings::{Settings, ToolUse};
use crate::state::{AppState, LiveReply};
use crate::sync::lock;

pub use super::events::{Outcome, ReplyEvent};

/// Clears a conversation's Stop switch when its reply ends, however it ends.
struct Running<'a> {
    state: &'a AppState,
    conversation: ConversationId,
}

impl<'a> Running<'a> {
    /// Registers the conversation's Stop switch; refused while a reply is being written there.
    fn start(state: &'a AppState, conversation: ConversationId) -> Result<(Self, LiveReply), Failure> {
        let live = LiveReply::default();
        let mut replies = lock(&state.replies);
        if replies.contains_key(&conversation) {
            return Err("A reply is already being written in this chat; stop it first.".into());
        }
        replies.insert(conversation, live.clone());
        Ok((Running { state, conversation }, live))
    }
}

impl Drop for Running<'_> {
    fn drop(&mut self) {
        lock(&self.state.replies).remove(&self.conversation);
    }
}

/// How long deleting a replying chat waits for its reply to stop: a token and a save, unless
/// the engine is in the middle of a long prefill chunk.
pub const STOP_WAIT: Duration = Duration::from_secs(30);

/// Stops the conversation's reply, if one is running, and waits until it has ended and saved
/// its text; false if it is still running after `wait`.
pub async fn stop_and_wait(state: &AppState, conversation: ConversationId, wait: Duration) -> bool {
    let Some(cancel) = lock(&state.replies).get(&conversation).map(|live| live.cancel.clone()) else { return true };
    cancel.store(true, std::sync::atomic::Ordering::Relaxed);
    let deadline = Instant::now() + wait;
    while lock(&state.replies).contains_key(&conversation) {
        if Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The model a reply will use, or a message saying how to get one.
pub fn require_model(state: &AppState) -> Result<Current, Failure> {
    if let Some(current) = state.model.current() {
        return Ok(current);
    }
    let status = state.model.state();
    Err(Failure::from(match (status.loading, status.error) {
        (Some(loading), _) => format!("The model is still loading ({:.0}%); try again in a moment.", loading.fraction * 100.0),
        (None, Some(error)) => error,
        (None, None) => "No model is loaded. Pick one in the model menu.".into(),
    }))
}

/// Who writes a reply: the loaded model, or a provider's model picked in the model menu.
pub enum Target {
    /// Boxed: a loaded model's handle (its tokenizer and template included) is the larger.
    Local(Box<Current>),
    Remote(RemoteTarget),
}

/// The model replies go to now, or a message saying how to get one.
pub async fn require_target(state: &AppState) -> Result<Target, Failure> {
    if let Some(remote) = state.providers.lock().await.target(&state.secrets)? {
        return Ok(Target::Remote(remote));
    }
    require_model(state).map(|model| Target::Local(Box::new(model)))
}

impl Target {
    /// A model that cannot take the attachment gets nothing; the message says what would.
    pub fn check_takes(&self, attachment: &confab_store::Attachment) -> Result<(), Failure> {
        match self {
            Target::Local(model) => check_model_takes(&model.info, attachment),
            Target::Remote(remote) => remote.check_takes(attachment).map_err(Failure::from),
        }
    }
}

/// Writes the reply to `user` (a saved user message), streaming it to `channel`.
pub async fn stream_reply(
    app: AppHandle,
    state: Arc<AppState>,
    conversation: ConversationId,
    user: MessageId,
    channel: Channel<ReplyEvent>,
) -> Result<(), Failure> {
    let target = require_target(&state).await?;
    let (_running, live) = Running::start(&state, conversation)?;

    let store = &state.store;
    let branch = store.branch(conversation, user).await?;
    let chat = store.conversation(conversation).await?;
    let writer = Writer::new(&app, &state, &target, &chat, &live, &channel).await;
    // The reply's row, and the window's word that it started.
    let start = || async {
        let reply = store.start_reply(conversation, user).await?;
        let _ = channel.send(ReplyEvent::started(message_view(store, store.message(user).await?).await?, store.message(reply).await?));
        Ok::<_, Failure>(reply)
    };
    let (reply, first) = match &target {
        Target::Local(model) => {
            // The engine starts on the prompt first; the reply's row is made while it computes
            // (a person waits for the first token from Enter on).
            let prompt = match writer.local_prompt(model, &branch).await {
                Ok(prompt) => prompt,
                // The question is saved: the reply says why it is not written (no embedding
                // model for a document to search, Stop while one was indexed), and can be
                // regenerated once that is dealt with.
                Err(Failure(message)) => {
                    let reply = start().await?;
                    let stopped = live.cancel.load(std::sync::atomic::Ordering::Relaxed);
                    let end = if stopped { ReplyEnd::Stopped } else { ReplyEnd::Error(message) };
                    return finish(store, reply, Outcome::ended(end), &channel).await;
                }
            };
            let events = writer.start_local(model, Prompt::Chat(prompt.messages), true)?;
            let reply = match start().await {
                Ok(reply) => reply,
                Err(e) => {
                    events.cancel();
                    return Err(e);
                }
            };
            writer.keep_sources(reply, prompt.sources).await?;
            (reply, writer.generate_local(model, events, reply, false).await)
        }
        Target::Remote(remote) => {
            let reply = start().await?;
            (reply, writer.remote_round(remote, &branch, reply).await)
        }
    };
    let outcome = writer.tool_rounds(reply, 0, first).await?;

    finish(store, reply, outcome, &channel).await?;
    if branch.len() == 1 {
        crate::chat::title::write_in_background(app, state.clone(), conversation, branch[0].content.clone());
    }
    Ok(())
}

/// Writes more of a stopped, interrupted or cut reply (one the token limit ended) with the
/// loaded model, appended to the same message: the prompt is the chat, attachments and all,
/// with that reply left open (no end of turn after it), and a long chat leaves out its oldest
/// turns as a new reply does. A reply stopped in a round of tool calls goes on with the next
/// round; one cut while the model was still thinking goes on inside its reasoning.
pub async fn continue_reply(app: AppHandle, state: Arc<AppState>, reply: MessageId, channel: Channel<ReplyEvent>) -> Result<(), Failure> {
    if state.providers.lock().await.selected.is_some() {
        return Err("Continue works with a model loaded here; pick one in the model menu, or regenerate the reply.".into());
    }
    let model = require_model(&state)?;
    let store = &state.store;
    let old = store.message(reply).await?;
    let conversation = old.conversation_id;
    let Some(user) = old.parent_id.filter(|_| old.role == Role::Assistant) else {
        return Err("Only a reply can be continued.".into());
    };
    // Only reasoning so far: the model was cut (or stopped) while it thought.
    let mid_thought = old.content.trim().is_empty()
        && old.tool_calls.is_empty()
        && old.reasoning.as_deref().is_some_and(|reasoning| !reasoning.trim().is_empty());
    if old.content.trim().is_empty() && old.tool_calls.is_empty() && !mid_thought {
        return Err("This reply has no text to continue; regenerate it instead.".into());
    }
    let opening = match model.info.reply_format.reasoning {
        Some(markers) => markers.open,
        None if mid_thought => {
            return Err("This reply has only its reasoning, which this model cannot go on with; regenerate it instead.".into())
        }
        None => "",
    };
    let chat = store.conversation(conversation).await?;
    if chat.current_leaf != Some(reply) {
        return Err("Only the last reply of a chat can be continued.".into());
    }
    let target = Target::Local(Box::new(model.clone()));
    let (_running, live) = Running::start(&state, conversation)?;
    let writer = Writer::new(&app, &state, &target, &chat, &live, &channel).await;
    let mut branch = store.branch(conversation, reply).await?;
    if let Some(last) = branch.last_mut().filter(|_| mid_thought) {
        // The prompt ends inside the reasoning block, open as the model left it; the reply's
        // reader is told it starts there (`generate_local`'s `thinking`).
        last.content = format!("{opening}\n{}", last.reasoning.take().unwrap_or_default());
    }
    let DocumentPrompt { messages, sources } = writer.local_prompt(&model, &branch).await?;
    // After a round's results the model starts its next turn; otherwise it continues its text.
    let prompt = if messages.last().is_some_and(|m| m.role == "tool") { Prompt::Chat(messages) } else { Prompt::Continue(messages) };
    // Prepared once before the reply reopens, so that a chat that cannot be continued (a
    // template that rewrites the reply's text, an attachment gone) leaves it as it was.
    let (engine, id, check) = (state.engine.clone(), model.id, prompt.clone());
    tauri::async_runtime::spawn_blocking(move || engine.tokenize(id, check)).await??;

    store.resume_reply(reply).await?;
    let _ = channel.send(ReplyEvent::started(message_view(store, store.message(user).await?).await?, store.message(reply).await?));
    if !sources.is_empty() {
        writer.keep_sources(reply, sources).await?;
    }
    let events = writer.start_local(&model, prompt, false)?;
    let first = writer.generate_local(&model, events, reply, mid_thought).await;
    let next_round = old.tool_calls.iter().map(|c| c.round + 1).max().unwrap_or(0);
    let outcome = writer.tool_rounds(reply, next_round, first).await?;
    finish(store, reply, outcome, &channel).await
}

/// What writing one reply needs, round after round.
struct Writer<'a> {
    app: &'a AppHandle,
    state: &'a Arc<AppState>,
    target: &'a Target,
    chat: &'a Conversation,
    settings: Settings,
    toolbox: Toolbox,
    live: &'a LiveReply,
    channel: &'a Channel<ReplyEvent>,
}

impl<'a> Writer<'a> {
    /// With the settings and the tools offered as they are when the reply starts.
    async fn new(
        app: &'a AppHandle,
        state: &'a Arc<AppState>,
        target: &'a Target,
        chat: &'a Conversation,
        live: &'a LiveReply,
        channel: &'a Channel<ReplyEvent>,
    ) -> Writer<'a> {
        Writer { app, state, target, chat, settings: state.settings(), toolbox: Toolbox::for_reply(state).await, live, channel }
    }

    /// The branch as the local model takes it, its documents whole where they fit, else
    /// searched for the question (`document_search`).
    async fn local_prompt(&self, model: &Current, branch: &[Message]) -> Result<DocumentPrompt, Failure> {
        let system = system_prompt(self.chat, &self.settings);
        let progress = |progress: IndexProgress| {
            let _ = self.app.emit("document-index", progress);
        };
        let search = document_search::Search { progress: &progress, cancel: &self.live.cancel };
        document_search::local_prompt(&search, self.state, model, &self.settings, system, branch, model.info.vision).await
    }

    /// Keeps the passages the reply was given with it (its citations), and tells the window.
    async fn keep_sources(&self, reply: MessageId, sources: Vec<ReplySource>) -> Result<(), Failure> {
        self.state.store.set_reply_sources(reply, &sources).await?;
        if !sources.is_empty() {
            let _ = self.channel.send(ReplyEvent::Sources { reply, sources });
        }
        Ok(())
    }

    /// The tools a round is offered. With "Always call a tool" (`ToolUse::Required`) a new
    /// reply's first round must call one; the rounds after the results answer as the model decides.
    fn tools(&self, first_round: bool) -> Tools {
        let definitions = self.toolbox.definitions();
        let required = first_round && self.settings.tool_use == ToolUse::Required && !definitions.is_empty();
        Tools { definitions, choice: if required { ToolChoice::Required } else { ToolChoice::Auto } }
    }

    /// Hands the prompt to the loaded model's engine, which starts on it at once.
    fn start_local(&self, model: &Current, prompt: Prompt, first_round: bool) -> Result<Generation, Failure> {
        let request = local_model::request(model, prompt, &self.settings, self.chat.thinking, self.tools(first_round))?;
        Ok(self.state.engine.generate_cancellable(request, self.live.cancel.clone()))
    }

    /// Streams a started generation into `reply`, on a blocking thread; `thinking`: it goes on
    /// inside the reasoning block its prompt left open.
    async fn generate_local(&self, model: &Current, events: Generation, reply: MessageId, thinking: bool) -> Outcome {
        let (state, channel, model, tools) = (self.state.clone(), self.channel.clone(), model.clone(), self.toolbox.definitions());
        tauri::async_runtime::spawn_blocking(move || {
            // The request is on its way (a pass over /proc, 2-3 ms): threads the web view started
            // since the last reply go below the engine too.
            web_view_priority::lower();
            let send = |event| {
                let _ = channel.send(event);
            };
            local_model::generate(&state.store, &model, events, tools, reply, thinking, &send)
        })
        .await
        .unwrap_or_else(|e| Outcome::ended(ReplyEnd::Error(format!("the reply stopped unexpectedly: {e}"))))
    }

    /// One round written by a provider's model: the branch (the reply's earlier rounds
    /// included) sent with the tools.
    async fn remote_round(&self, remote: &RemoteTarget, branch: &[Message], reply: MessageId) -> Outcome {
        let store = &self.state.store;
        match remote_model::chat_messages(store, remote, system_prompt(self.chat, &self.settings), branch).await {
            Ok(messages) => {
                let request = remote_model::request(remote, messages, &self.settings, self.toolbox.definitions());
                let send = |event| {
                    let _ = self.channel.send(event);
                };
                remote_model::generate(store, remote, request, &self.live.cancel, reply, &send).await
            }
            Err(message) => Outcome::ended(ReplyEnd::Error(message)),
        }
    }

    /// While the model ends a round with tool calls: the calls are decided and run, and the
    /// model writes the next round, up to the rounds Settings allow.
    async fn tool_rounds(&self, reply: MessageId, first_round: u32, mut outcome: Outcome) -> Result<Outcome, Failure> {
        let store = &self.state.store;
        let mut round = first_round;
        while outcome.end == ReplyEnd::Complete && !outcome.calls.is_empty() {
            let calls = std::mem::take(&mut outcome.calls);
            if round >= first_round + self.toolbox.rounds {
                let limit = self.toolbox.rounds;
                outcome.end = ReplyEnd::Error(format!(
                    "The model called tools {limit} rounds in a row, the limit in Settings › Tools, so it was stopped before running {} more. Ask it to go on, or raise the limit.",
                    calls.len()
                ));
                return Ok(outcome);
            }
            let send = |event| {
                let _ = self.channel.send(event);
            };
            if tool_rounds::run_round(self.state, &self.toolbox, reply, round, calls, &self.live.cancel, &send).await? == RoundEnd::Stopped
            {
                return Ok(Outcome { end: ReplyEnd::Stopped, ..outcome });
            }
            round += 1;
            let branch = store.branch(self.chat.id, reply).await?;
            let next = match self.target {
                Target::Local(model) => {
                    let events = self.start_local(model, Prompt::Chat(self.local_prompt(model, &branch).await?.messages), false)?;
                    self.generate_local(model, events, reply, false).await
                }
                Target::Remote(remote) => self.remote_round(remote, &branch, reply).await,
            };
            let stats = tool_rounds::add_stats(outcome.stats.take(), next.stats.clone());
            outcome = Outcome { stats, ..next };
        }
        Ok(outcome)
    }
}

/// Saves how the reply ended and tells the window.
async fn finish(store: &Store, reply: MessageId, outcome: Outcome, channel: &Channel<ReplyEvent>) -> Result<(), Failure> {
    store.finish_reply(reply, outcome.end.clone(), outcome.stats.as_ref()).await?;
    let saved = store.message(reply).await?;
    tracing::debug!(reply = reply.0, "reply saved; the window is told it ended");
    let _ = channel.send(match outcome.end {
        ReplyEnd::Error(message) | ReplyEnd::Interrupted(message) => ReplyEvent::Error { message, reply: Some(saved) },
        _ => ReplyEvent::Done { reply: saved },
    });
    Ok(())
}

/// A model gets only the kinds of media it reads; the message names what would work.
fn check_model_takes(model: &ModelInfo, attachment: &Attachment) -> Result<(), Failure> {
    // Every model reads text.
    if documents::is_document(attachment) {
        return Ok(());
    }
    let name = attachment.original_name.as_deref().unwrap_or("this file");
    let Some(kind) = MediaKind::of_mime(&attachment.mime) else {
        return Err(format!("{name} is not an image, audio clip or video; remove the attachment.").into());
    };
    if confab_turn::takes(model, kind) {
        return Ok(());
    }
    let (what, capability, example) = match kind {
        MediaKind::Image => ("images", "vision", "Gemma 4 or Qwen3-VL"),
        MediaKind::Audio => ("audio", "audio", "Gemma 4"),
        MediaKind::Video => ("videos", "video", "Qwen3-VL"),
    };
    Err(format!(
        "{} does not read {what}, so it cannot take {name}. Load a model with {capability} (such as {example}) from the model menu, or remove the attachment.",
        model.name
    )
    .into())
}

#[cfg(test)]
#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_takes_the_kinds_it_reads_and_the_refusal_names_one_that_would() {
        let engine = confab_engine::Engine::start(Default::default()).expect("engine");
        let tiny = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny/llama");
        let mut model = Current::load_for_test(&engine, &tiny).info;
        (model.name, model.vision, model.audio, model.video) = ("Qwen3-VL".into(), true, false, true);
        let file = |mime: &str, name: &str| Attachment {
            hash: confab_store::AttachmentHash::parse(&"ab".repeat(32)).unwrap(),
            mime: mime.into(),
            size: 1,
            original_name: Some(name.into()),
            width: None,
            height: None,
            duration_ms: None,
            created_at: 0,
        };
        assert!(check_model_takes(&model, &file("video/mp4", "clip.mp4")).is_ok());
        assert!(check_model_takes(&model, &file("video/gif", "moving.gif")).is_ok());
        assert!(check_model_takes(&model, &file("image/png", "cat.png")).is_ok());
        let refused = check_model_takes(&model, &file("audio/wav", "memo.wav")).unwrap_err().0;
        assert!(refused.starts_with("Qwen3-VL does not read audio, so it cannot take memo.wav."), "{refused}");
        let text_only = ModelInfo { vision: false, video: false, ..model };
        let refused = check_model_takes(&text_only, &file("video/mp4", "clip.mp4")).unwrap_err().0;
        assert!(refused.contains("does not read videos") && refused.contains("such as Qwen3-VL"), "{refused}");
    }
}
