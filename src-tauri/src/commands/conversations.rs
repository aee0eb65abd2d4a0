//! The sidebar: list, create, rename, delete, search; and a conversation's messages.

use confab_store::{Conversation, ConversationCursor, ConversationId, ConversationPage, MessageId, NewConversation, SearchHit};

use super::App;
use crate::failure::Failure;
use crate::title::UNTITLED;
use crate::views::{current_branch, MessageView};

#[tauri::command]
pub async fn list_conversations(
    state: App<'_>,
    cursor: Option<ConversationCursor>,
    limit: Option<u32>,
) -> Result<ConversationPage, Failure> {
    Ok(state.store.list_conversations(limit.unwrap_or(200), cursor).await?)
}

#[tauri::command]
pub async fn create_conversation(state: App<'_>) -> Result<Conversation, Failure> {
    let model = state.model.current().map(|m| m.view.path.display().to_string());
    let new = NewConversation { title: UNTITLED.into(), model, system_prompt: None };
    Ok(state.store.create_conversation(new).await?)
}

#[tauri::command]
pub async fn rename_conversation(state: App<'_>, id: ConversationId, title: String) -> Result<(), Failure> {
    let title = title.trim();
    if title.is_empty() {
        return Err("A conversation needs a title.".into());
    }
    Ok(state.store.rename_conversation(id, title).await?)
}

#[tauri::command]
pub async fn delete_conversation(state: App<'_>, id: ConversationId) -> Result<(), Failure> {
    if state.replies.lock().map(|r| r.contains_key(&id)).unwrap_or(false) {
        return Err("This chat is still replying; stop it before deleting.".into());
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
