//! One assistant reply: saved as it streams, sent to the window through a Channel, and kept
//! (marked stopped, error or interrupted) however it ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use confab_engine::media::{MediaItem, MediaKind};
use confab_engine::runtime::{Generation, Prompt, Request};
use confab_engine::ChatMessage;
use confab_store::{Attachment, Conversation, ConversationId, Message, MessageId, ReplyEnd, Role, Store};
use tauri::ipc::Channel;
use tauri::AppHandle;

use crate::failure::Failure;
use crate::local_reply;
use crate::model_slot::{Current, LoadedModel};
use crate::providers::RemoteTarget;
use crate::remote_reply;
use crate::settings::Settings;
use crate::state::{AppState, LiveReply};
use crate::sync::lock;
use crate::views::message_view;
use crate::web_view_priority;

pub use crate::reply_event::{Outcome, ReplyEvent};

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
            Target::Local(model) => check_model_takes(&model.view, attachment),
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
    let settings = state.settings();
    let system = system_prompt(&chat, &settings);
    // The reply's row, and the window's word that it started.
    let start = || async {
        let reply = store.start_reply(conversation, user).await?;
        let _ = channel.send(ReplyEvent::started(message_view(store, store.message(user).await?).await?, store.message(reply).await?));
        Ok::<_, Failure>(reply)
    };
    let (reply, outcome) = match target {
        Target::Local(model) => {
            let messages = local_messages(store, system, &branch).await?;
            let request = local_reply::request(&model, Prompt::Chat(messages), &settings, chat.thinking);
            // The engine starts on the prompt first; the reply's row is made while it computes
            // (a person waits for the first token from Enter on).
            let events = start_local(&state, request, &live);
            let reply = match start().await {
                Ok(reply) => reply,
                Err(e) => {
                    events.cancel();
                    return Err(e);
                }
            };
            (reply, generate_local(&state, *model, events, reply, &channel).await)
        }
        Target::Remote(remote) => {
            let reply = start().await?;
            let outcome = match remote_reply::chat_messages(store, &remote, system, &branch).await {
                Ok(messages) => {
                    let request = confab_remote::ChatRequest {
                        model: remote.model.id.clone(),
                        messages,
                        sampling: remote_reply::sampling(&settings),
                        tools: Vec::new(),
                        tool_choice: None,
                    };
                    let send = |event| {
                        let _ = channel.send(event);
                    };
                    remote_reply::generate(store, &remote, request, &live.cancel, reply, &send).await
                }
                Err(message) => Outcome { end: ReplyEnd::Error(message), stats: None },
            };
            (reply, outcome)
        }
    };

    finish(store, reply, outcome, &channel).await?;
    if branch.len() == 1 {
        crate::title::write_in_background(app, state.clone(), conversation, branch[0].content.clone());
    }
    Ok(())
}

/// Writes more of a stopped or interrupted reply with the loaded model, appended to the same
/// message: the prompt is the chat, attachments and all, with that reply left open (no end of
/// turn after it), and a long chat leaves out its oldest turns as a new reply does.
pub async fn continue_reply(state: Arc<AppState>, reply: MessageId, channel: Channel<ReplyEvent>) -> Result<(), Failure> {
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
    if old.content.trim().is_empty() {
        return Err("This reply has no text to continue; regenerate it instead.".into());
    }
    let chat = store.conversation(conversation).await?;
    if chat.current_leaf != Some(reply) {
        return Err("Only the last reply of a chat can be continued.".into());
    }
    let settings = state.settings();
    let branch = store.branch(conversation, reply).await?;
    let prompt = Prompt::Continue(local_messages(store, system_prompt(&chat, &settings), &branch).await?);
    // Prepared once before the reply reopens, so that a chat that cannot be continued (a
    // template that rewrites the reply's text, an attachment gone) leaves it as it was.
    let (engine, id, check) = (state.engine.clone(), model.id, prompt.clone());
    tauri::async_runtime::spawn_blocking(move || engine.tokenize(id, check)).await??;

    let (_running, live) = Running::start(&state, conversation)?;
    store.resume_reply(reply).await?;
    let _ = channel.send(ReplyEvent::started(message_view(store, store.message(user).await?).await?, store.message(reply).await?));
    let request = local_reply::request(&model, prompt, &settings, chat.thinking);
    let events = start_local(&state, request, &live);
    let outcome = generate_local(&state, model, events, reply, &channel).await;
    finish(store, reply, outcome, &channel).await
}

/// Hands `request` to the loaded model's engine, which starts on it at once.
fn start_local(state: &AppState, request: Request, live: &LiveReply) -> Generation {
    state.engine.generate_cancellable(request, live.cancel.clone())
}

/// Streams a started generation into `reply`, on a blocking thread.
async fn generate_local(
    state: &Arc<AppState>,
    model: Current,
    events: Generation,
    reply: MessageId,
    channel: &Channel<ReplyEvent>,
) -> Outcome {
    let worker_state = state.clone();
    let worker_channel = channel.clone();
    tauri::async_runtime::spawn_blocking(move || {
        // The request is on its way (a pass over /proc, 2-3 ms): threads the web view started
        // since the last reply go below the engine too.
        web_view_priority::lower();
        let send = |event| {
            let _ = worker_channel.send(event);
        };
        local_reply::generate(&worker_state.store, &model, events, reply, &send)
    })
    .await
    .unwrap_or_else(|e| Outcome { end: ReplyEnd::Error(format!("the reply stopped unexpectedly: {e}")), stats: None })
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

/// The branch as the local model takes it: the system prompt, then each message with its media.
pub async fn local_messages(store: &Store, system_prompt: &str, branch: &[Message]) -> confab_store::Result<Vec<ChatMessage>> {
    let mut turns = Vec::with_capacity(branch.len());
    for message in branch {
        turns.push((message.clone(), media_of(store, message.id).await?));
    }
    Ok(chat_messages(system_prompt, &turns))
}

/// A message's attachments as the engine takes them: the stored file, known by its hash.
async fn media_of(store: &Store, message: MessageId) -> confab_store::Result<Vec<MediaItem>> {
    let mut media = Vec::new();
    for attachment in store.message_attachments(message).await? {
        media.push(media_item(store, &attachment).await?);
    }
    Ok(media)
}

/// A stored attachment as the engine takes it.
pub async fn media_item(store: &Store, attachment: &confab_store::Attachment) -> confab_store::Result<MediaItem> {
    let path = store.attachment_path(&attachment.hash).await?;
    let item = match MediaKind::of_mime(&attachment.mime) {
        Some(MediaKind::Audio) => MediaItem::audio(path),
        Some(MediaKind::Video) => MediaItem::video(path),
        Some(MediaKind::Image) | None => MediaItem::image(path),
    };
    Ok(item.with_hash(attachment.hash.as_str()))
}

/// The chat's own system prompt where it has one, else the one in Settings.
pub fn system_prompt<'a>(chat: &'a Conversation, settings: &'a Settings) -> &'a str {
    chat.system_prompt.as_deref().unwrap_or(&settings.system_prompt)
}

/// The branch as the chat template takes it, each message with its media and a reply with
/// its reasoning (which templates show or drop). Failed empty replies are left out.
pub fn chat_messages(system_prompt: &str, branch: &[(Message, Vec<MediaItem>)]) -> Vec<ChatMessage> {
    let system = (!system_prompt.trim().is_empty()).then(|| ChatMessage::new("system", system_prompt));
    let turns = branch.iter().filter(|(m, _)| !(m.role == Role::Assistant && m.content.is_empty())).map(|(m, media)| {
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        let mut turn = ChatMessage::new(role, m.content.clone()).with_media(media.iter().cloned());
        turn.reasoning_content = m.reasoning.clone().filter(|_| m.role == Role::Assistant);
        turn
    });
    system.into_iter().chain(turns).collect()
}

/// A model gets only the kinds of media it reads; the message names what would work.
fn check_model_takes(model: &LoadedModel, attachment: &Attachment) -> Result<(), Failure> {
    let name = attachment.original_name.as_deref().unwrap_or("this file");
    let (reads, what, capability, example) = match MediaKind::of_mime(&attachment.mime) {
        Some(MediaKind::Image) => (model.vision, "images", "vision", "Gemma 4 or Qwen3-VL"),
        Some(MediaKind::Audio) => (model.audio, "audio", "audio", "Gemma 4"),
        Some(MediaKind::Video) => (model.video, "videos", "video", "Qwen3-VL"),
        None => return Err(format!("{name} is not an image, audio clip or video; remove the attachment.").into()),
    };
    if reads {
        return Ok(());
    }
    Err(format!(
        "{} does not read {what}, so it cannot take {name}. Load a model with {capability} (such as {example}) from the model menu, or remove the attachment.",
        model.name
    )
    .into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use confab_store::{ConversationId, MessageStatus};

    fn message(id: i64, role: Role, content: &str) -> Message {
        Message {
            id: MessageId(id),
            conversation_id: ConversationId(1),
            parent_id: None,
            role,
            content: content.into(),
            status: MessageStatus::Complete,
            error: None,
            created_at: 0,
            stats: None,
            reasoning: None,
            reasoning_ms: None,
            tool_calls: Vec::new(),
        }
    }

    #[test]
    fn the_branch_becomes_chat_turns_after_the_system_prompt() {
        let photo = MediaItem::image("/store/ab/cdef").with_hash("abcdef");
        let branch = [
            (message(1, Role::User, "hi"), vec![photo.clone()]),
            (message(2, Role::Assistant, ""), vec![]),
            (message(3, Role::User, "again"), vec![]),
        ];
        let chat = chat_messages("Be brief.", &branch);
        let roles: Vec<_> = chat.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "user"], "an empty failed reply is left out");
        assert_eq!(chat[1].media, vec![photo], "attachments travel with their message");
        assert_eq!(chat_messages("  ", &branch[..1]).len(), 1, "a blank system prompt is none");

        let thought = Message { reasoning: Some("2 and 2 make 4".into()), reasoning_ms: Some(900), ..message(2, Role::Assistant, "4") };
        let asked = Message { reasoning: Some("not a reply's".into()), ..message(1, Role::User, "2+2?") };
        let chat = chat_messages("", &[(asked, vec![]), (thought, vec![])]);
        assert_eq!(chat[1].reasoning_content.as_deref(), Some("2 and 2 make 4"), "a reply's reasoning goes back to the template");
        assert_eq!(chat[0].reasoning_content, None);
    }

    #[test]
    fn a_chat_s_own_system_prompt_reaches_the_prompt_in_place_of_the_global_one() {
        let settings = Settings { system_prompt: "Be brief.".into(), ..Settings::default() };
        let mut chat = Conversation {
            id: ConversationId(1),
            title: "t".into(),
            created_at: 0,
            updated_at: 0,
            model: None,
            system_prompt: None,
            current_leaf: None,
            thinking: true,
        };
        let branch = [(message(1, Role::User, "hi"), vec![])];
        assert_eq!(chat_messages(system_prompt(&chat, &settings), &branch)[0].content, "Be brief.");
        chat.system_prompt = Some("Answer in French.".into());
        let turns = chat_messages(system_prompt(&chat, &settings), &branch);
        assert_eq!((turns[0].role.as_str(), turns[0].content.as_str()), ("system", "Answer in French."));
    }

    #[test]
    fn a_model_takes_the_kinds_it_reads_and_the_refusal_names_one_that_would() {
        let model = LoadedModel {
            name: "Qwen3-VL".into(),
            path: "/models/qwen3-vl".into(),
            architecture: "qwen3_vl".into(),
            format: "safetensors".into(),
            dtype: "float32".into(),
            quantized: false,
            context_length: 1024,
            parameters: 1,
            vision: true,
            audio: false,
            video: true,
            thinking_switch: false,
        };
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
        let text_only = LoadedModel { vision: false, video: false, ..model };
        let refused = check_model_takes(&text_only, &file("video/mp4", "clip.mp4")).unwrap_err().0;
        assert!(refused.contains("does not read videos") && refused.contains("such as Qwen3-VL"), "{refused}");
    }
}
