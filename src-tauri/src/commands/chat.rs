//! Send, regenerate, edit and stop: each new reply streams through a Channel.

use std::sync::atomic::Ordering;

use confab_store::{AttachmentHash, ConversationId, MessageId, Role};
use tauri::ipc::Channel;
use tauri::{AppHandle, Emitter};

use super::App;
use crate::chat::reply::{require_target, stream_reply, ReplyEvent};
use crate::chat::title::{provisional, UNTITLED};
use crate::failure::Failure;
use crate::models::context_meter::ContextUse;
use crate::sync::lock;

/// Saves the user's message on the current branch, then streams the reply to it. Without a
/// conversation it starts a new one (the `Started` event names it), with the thinking switch
/// as the window shows it (`thinking`; an existing chat keeps its own): one call from Enter to
/// the engine, where the window would otherwise wait for two.
#[tauri::command]
pub async fn send_message(
    app: AppHandle,
    state: App<'_>,
    conversation: Option<ConversationId>,
    text: String,
    attachments: Vec<String>,
    thinking: Option<bool>,
    channel: Channel<ReplyEvent>,
) -> Result<(), Failure> {
    if text.trim().is_empty() && attachments.is_empty() {
        return Err("Type a message first.".into());
    }
    // Checked before anything is saved: a message the model cannot take is not sent.
    let target = require_target(&state).await?;
    let hashes = attachments.iter().map(|h| AttachmentHash::parse(h)).collect::<Result<Vec<_>, _>>()?;
    for hash in &hashes {
        target.check_takes(&state.store.attachment(hash).await?)?;
    }
    let store = &state.store;
    // A new chat is titled with the start of its first message at once (so is one an older
    // version made empty); the sidebar shows it, and the model's own title follows later.
    let (chat, new) = match conversation {
        Some(id) => (store.conversation(id).await?, false),
        None => (super::conversations::new_conversation(&state, &provisional(&text), thinking).await?, true),
    };
    let conversation = chat.id;
    let user = store.add_message_with_attachments(conversation, chat.current_leaf, Role::User, &text, &hashes).await?;
    let untitled = !new && chat.current_leaf.is_none() && chat.title == UNTITLED;
    if untitled {
        store.rename_conversation(conversation, &provisional(&text)).await?;
    }
    if new || untitled {
        let _ = app.emit("conversation-updated", store.conversation(conversation).await?);
    }
    stream_reply(app, state.inner().clone(), conversation, user, channel).await
}

/// Another reply to the same user message, kept beside the earlier ones.
#[tauri::command]
pub async fn regenerate(app: AppHandle, state: App<'_>, reply: MessageId, channel: Channel<ReplyEvent>) -> Result<(), Failure> {
    require_target(&state).await?;
    let old = state.store.message(reply).await?;
    let user = match (old.role, old.parent_id) {
        (Role::Assistant, Some(parent)) => parent,
        _ => return Err("Only a reply can be regenerated.".into()),
    };
    stream_reply(app, state.inner().clone(), old.conversation_id, user, channel).await
}

/// More of a stopped or interrupted reply, appended to it.
#[tauri::command]
pub async fn continue_reply(app: AppHandle, state: App<'_>, reply: MessageId, channel: Channel<ReplyEvent>) -> Result<(), Failure> {
    crate::chat::reply::continue_reply(app, state.inner().clone(), reply, channel).await
}

/// An edited copy of a user message, as a new branch from the same parent; then its reply.
#[tauri::command]
pub async fn edit_message(
    app: AppHandle,
    state: App<'_>,
    message: MessageId,
    text: String,
    channel: Channel<ReplyEvent>,
) -> Result<(), Failure> {
    if text.trim().is_empty() {
        return Err("An edited message cannot be empty.".into());
    }
    require_target(&state).await?;
    let store = &state.store;
    let original = store.message(message).await?;
    if original.role != Role::User {
        return Err("Only your own messages can be edited.".into());
    }
    let hashes: Vec<_> = store.message_attachments(message).await?.into_iter().map(|a| a.hash).collect();
    let edited = store.add_message_with_attachments(original.conversation_id, original.parent_id, Role::User, &text, &hashes).await?;
    stream_reply(app, state.inner().clone(), original.conversation_id, edited, channel).await
}

/// Stops the conversation's reply within one token; the text so far is kept, marked stopped.
#[tauri::command]
pub fn stop_reply(state: App<'_>, conversation: ConversationId) {
    if let Some(live) = lock(&state.replies).get(&conversation) {
        live.cancel.store(true, Ordering::Relaxed);
    }
}

/// How full the loaded model's context would be with `draft` sent next in `conversation` (none
/// yet: a new chat), for the meter under the message box. `None` when no local model would
/// take it: none is loaded, or a provider's model is picked.
#[tauri::command]
pub async fn measure_context(
    state: App<'_>,
    conversation: Option<ConversationId>,
    draft: String,
    attachments: Vec<String>,
) -> Result<Option<ContextUse>, Failure> {
    let Some(model) = state.model.current() else { return Ok(None) };
    if state.providers.lock().await.selected.is_some() {
        return Ok(None);
    }
    let settings = state.settings();
    let store = &state.store;
    let (system, branch) = match conversation {
        Some(id) => {
            let chat = store.conversation(id).await?;
            let branch = match chat.current_leaf {
                Some(leaf) => store.branch(id, leaf).await?,
                None => vec![],
            };
            (crate::chat::turns::system_prompt(&chat, &settings).to_owned(), branch)
        }
        None => (settings.system_prompt.clone(), vec![]),
    };
    let images = model.info.vision;
    let mut media = Vec::with_capacity(attachments.len());
    let mut documents = Vec::new();
    for hash in &attachments {
        let attachment = store.attachment(&AttachmentHash::parse(hash)?).await?;
        if crate::attachments::documents::is_document(&attachment) {
            documents.push(attachment);
        } else {
            media.push(crate::chat::turns::media_item(store, &attachment).await?);
        }
    }
    // Documents count as what they add to the prompt: their text, or the passages searched.
    let crate::chat::document_search::Metered { history, draft, extra } =
        crate::chat::document_search::metered(state.inner(), &model, &settings, &system, &branch, images, &documents, &draft).await?;
    let state = state.inner().clone();
    let mut used = tauri::async_runtime::spawn_blocking(move || {
        state.context_meter.measure(&state.engine, &model, history, &draft, media, settings.max_tokens)
    })
    .await??;
    // The passages of searched documents, as the rule counts them.
    used.used += extra;
    used.alone += extra;
    Ok(Some(used))
}
