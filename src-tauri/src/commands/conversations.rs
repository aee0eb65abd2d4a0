//! The sidebar: list, create, rename, delete, search; and a conversation's messages.

use confab_store::{Conversation, ConversationCursor, ConversationId, ConversationPage, MessageId, NewConversation, SearchHit};

use super::App;
use crate::chat::reply::{stop_and_wait, STOP_WAIT};
use crate::chat::title::{cut, MAX_RENAME_CHARS};
use crate::chat::views::{current_branch, MessageView};
use crate::failure::Failure;
use crate::state::AppState;

#[tauri::command]
pub async fn list_conversations(
    state: App<'_>,
    cursor: Option<ConversationCursor>,
    limit: Option<u32>,
) -> Result<ConversationPage, Failure> {
    Ok(state.store.list_conversations(limit.unwrap_or(200), cursor).await?)
}

/// An empty chat for the model loaded now (a first message makes it: `send_message`), with
/// its thinking switch as the window had it (`None`: on).
pub async fn new_conversation(state: &AppState, title: &str, thinking: Option<bool>) -> Result<Conversation, Failure> {
    let model = state.model.current().map(|m| m.info.path.display().to_string());
    let new = NewConversation { title: title.into(), model, system_prompt: None, thinking };
    Ok(state.store.create_conversation(new).await?)
}

/// Renames a chat; returns the title as stored (one line, cut to `MAX_RENAME_CHARS`).
#[tauri::command]
pub async fn rename_conversation(state: App<'_>, id: ConversationId, title: String) -> Result<String, Failure> {
    let line = title.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.is_empty() {
        return Err("A chat needs a title: type one, or press Esc to keep the old one.".into());
    }
    let title = cut(&line, MAX_RENAME_CHARS);
    state.store.rename_conversation(id, &title).await?;
    Ok(title)
}

/// Sets the chat's own system prompt, used in place of the one in Settings; an empty one goes
/// back to the Settings one. Returns the chat as stored.
#[tauri::command]
pub async fn set_system_prompt(state: App<'_>, id: ConversationId, prompt: String) -> Result<Conversation, Failure> {
    let prompt = prompt.trim();
    state.store.set_system_prompt(id, (!prompt.is_empty()).then_some(prompt)).await?;
    Ok(state.store.conversation(id).await?)
}

/// Turns the chat's thinking on or off, for models whose template has the switch; returns the
/// chat as stored.
#[tauri::command]
pub async fn set_thinking(state: App<'_>, id: ConversationId, on: bool) -> Result<Conversation, Failure> {
    state.store.set_thinking(id, on).await?;
    Ok(state.store.conversation(id).await?)
}

/// Deletes a chat; one that is replying is stopped first (its reply ends within a token).
#[tauri::command]
pub async fn delete_conversation(state: App<'_>, id: ConversationId) -> Result<(), Failure> {
    if !stop_and_wait(&state, id, STOP_WAIT).await {
        return Err("This chat's reply did not stop in time; try deleting it again in a moment.".into());
    }
    Ok(state.store.delete_conversation(id).await?)
}

#[tauri::command]
pub async fn conversation_messages(state: App<'_>, id: ConversationId) -> Result<Vec<MessageView>, Failure> {
    Ok(current_branch(&state.store, id).await?)
}

/// Shows the branch through `message` (a sibling picked in the "< 2/3 >" switcher).
#[tauri::command]
pub async fn select_branch(state: App<'_>, message: MessageId) -> Result<Vec<MessageView>, Failure> {
    let conversation = state.store.message(message).await?.conversation_id;
    state.store.select_branch(conversation, message).await?;
    Ok(current_branch(&state.store, conversation).await?)
}

#[tauri::command]
pub async fn search_messages(state: App<'_>, query: String) -> Result<Vec<SearchHit>, Failure> {
    if query.trim().is_empty() {
        return Ok(Vec::new());
    }
    Ok(state.store.search(&query, 50).await?)
}
