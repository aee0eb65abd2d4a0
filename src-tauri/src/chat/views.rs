//! Messages as the window shows them: with their attachments and their place among siblings.

use confab_store::{Attachment, ConversationId, Message, ReplySource, Role, Siblings, Store};

#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct MessageView {
    pub message: Message,
    pub attachments: Vec<Attachment>,
    pub siblings: Siblings,
    /// A reply's citations: the document passages its prompt was given (documents too large
    /// for the context are searched per question).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<ReplySource>>", optional)]
    pub sources: Vec<ReplySource>,
}

pub async fn message_view(store: &Store, message: Message) -> confab_store::Result<MessageView> {
    let attachments = store.message_attachments(message.id).await?;
    let siblings = store.siblings(message.id).await?;
    let sources = if message.role == Role::Assistant { store.reply_sources(message.id).await? } else { Vec::new() };
    Ok(MessageView { message, attachments, siblings, sources })
}

/// The conversation's current branch, root first.
pub async fn current_branch(store: &Store, conversation: ConversationId) -> confab_store::Result<Vec<MessageView>> {
    let mut views = Vec::new();
    for message in store.current_branch(conversation).await? {
        views.push(message_view(store, message).await?);
    }
    Ok(views)
}
