//! The chat as the model reads it: a branch's messages with their media, documents and tool
//! results (`Turn`), and those turns as the chat template's messages. The reply writer and
//! document search both build prompts from here.

use std::sync::Arc;

use confab_engine::ChatMessage;
use confab_media::{MediaItem, MediaKind};
use confab_store::{Conversation, Message, Role, Store};

use super::tool_rounds;
use crate::attachments::documents;
use crate::failure::Failure;
use crate::settings::Settings;

/// The branch's messages with what the engine reads beside their text (see `Turn`): their
/// media and documents whole, and the images tools returned with their results when
/// `result_images` (a model that reads images). `chat_messages` makes them the prompt; where
/// the documents do not fit, `document_search` gives passages instead.
pub async fn branch_turns(store: &Store, branch: &[Message], result_images: bool) -> Result<Vec<Turn>, Failure> {
    let mut turns = Vec::with_capacity(branch.len());
    for message in branch {
        let mut results = Vec::with_capacity(message.tool_calls.len());
        for call in &message.tool_calls {
            let mut images = Vec::new();
            for hash in tool_rounds::result_images(call).iter().filter(|_| result_images) {
                images.push(media_item(store, &store.attachment(hash).await?).await?);
            }
            results.push(images);
        }
        let attachments = store.message_attachments(message.id).await?;
        let mut media = Vec::new();
        for attachment in attachments.iter().filter(|a| !documents::is_document(a)) {
            media.push(media_item(store, attachment).await?);
        }
        // A model that reads images gets its documents' scanned pages as images, before the
        // message's own media (the documents come before the words typed too).
        if result_images {
            media.splice(0..0, documents::scan_images(store, &attachments).await?);
        }
        let documents = documents::prompt_texts(store, &attachments, result_images).await?;
        turns.push(Turn { message: message.clone(), media, documents, result_media: results });
    }
    Ok(turns)
}

/// A message of the branch with what the engine reads beside its text: its media attachments,
/// its documents as the prompt carries them, and the images of its tool calls' results (one
/// list per call, in order).
#[derive(Clone)]
pub struct Turn {
    pub message: Message,
    pub media: Vec<MediaItem>,
    pub documents: Vec<Arc<str>>,
    pub result_media: Vec<Vec<MediaItem>>,
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
/// its reasoning (which templates show or drop). Failed empty replies are left out. A reply
/// that called tools becomes its rounds: the assistant's text with its calls, one `tool`
/// message per result, and so on to the text after the last round.
pub fn chat_messages(system_prompt: &str, branch: &[Turn]) -> Vec<ChatMessage> {
    let system = (!system_prompt.trim().is_empty()).then(|| ChatMessage::new("system", system_prompt));
    let mut messages: Vec<ChatMessage> = system.into_iter().collect();
    for Turn { message: m, media, documents, result_media } in branch {
        if m.role == Role::Assistant && !m.tool_calls.is_empty() {
            messages.extend(tool_turns(m, result_media));
            continue;
        }
        if m.role == Role::Assistant && m.content.is_empty() {
            continue;
        }
        let role = match m.role {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
        };
        // Documents go in the turn's text, before the words typed.
        let mut turn = ChatMessage::new(role, confab_documents::with_documents(documents, &m.content)).with_media(media.iter().cloned());
        turn.reasoning_content = m.reasoning.clone().filter(|_| m.role == Role::Assistant);
        messages.push(turn);
    }
    messages
}

/// A reply's rounds as template turns (see `chat_messages`).
fn tool_turns(reply: &Message, result_media: &[Vec<MediaItem>]) -> Vec<ChatMessage> {
    let mut turns = Vec::new();
    for round in tool_rounds::rounds(reply, &reply.tool_calls) {
        if round.calls.is_empty() && round.content.is_empty() {
            continue;
        }
        let mut turn = ChatMessage::new("assistant", round.content);
        turn.reasoning_content = round.reasoning.map(str::to_string);
        turn.tool_calls = round
            .calls
            .iter()
            .map(|call| confab_engine::ToolCall {
                id: call.call_id.clone(),
                name: call.tool.clone(),
                arguments: match serde_json::from_str(&call.arguments) {
                    Ok(serde_json::Value::Object(object)) => serde_json::Value::Object(object),
                    _ => serde_json::json!({}),
                },
            })
            .collect();
        turns.push(turn);
        for call in round.calls {
            let mut result = ChatMessage::new("tool", tool_rounds::result_for_model(call));
            result.tool_call_id = Some(call.call_id.clone());
            result.name = Some(call.tool.clone());
            let index = reply.tool_calls.iter().position(|c| c.position == call.position);
            result.media = index.and_then(|i| result_media.get(i)).cloned().unwrap_or_default();
            turns.push(result);
        }
    }
    turns
}

#[cfg(test)]
mod tests {
    use super::*;
    use confab_store::{ConversationId, MessageId, MessageStatus};

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
            tool_calls: vec![],
        }
    }

    fn turn(message: Message, media: Vec<MediaItem>) -> Turn {
        Turn { message, media, documents: vec![], result_media: vec![] }
    }

    #[test]
    fn documents_go_in_their_turn_s_text_before_the_question() {
        let rendered: Arc<str> = "<document name=\"a.md\">\n# A\n</document>".into();
        let asked = Turn { documents: vec![rendered.clone()], ..turn(message(1, Role::User, "What is A?"), vec![]) };
        let chat = chat_messages("", &[asked]);
        assert_eq!(chat[0].content, format!("{rendered}\n\nWhat is A?"));
        assert!(chat[0].media.is_empty(), "a document is text, not media");
    }

    #[test]
    fn the_branch_becomes_chat_turns_after_the_system_prompt() {
        let photo = MediaItem::image("/store/ab/cdef").with_hash("abcdef");
        let branch = [
            turn(message(1, Role::User, "hi"), vec![photo.clone()]),
            turn(message(2, Role::Assistant, ""), vec![]),
            turn(message(3, Role::User, "again"), vec![]),
        ];
        let chat = chat_messages("Be brief.", &branch);
        let roles: Vec<_> = chat.iter().map(|m| m.role.as_str()).collect();
        assert_eq!(roles, ["system", "user", "user"], "an empty failed reply is left out");
        assert_eq!(chat[1].media, vec![photo], "attachments travel with their message");
        assert_eq!(chat_messages("  ", &branch[..1]).len(), 1, "a blank system prompt is none");

        let thought = Message { reasoning: Some("2 and 2 make 4".into()), reasoning_ms: Some(900), ..message(2, Role::Assistant, "4") };
        let asked = Message { reasoning: Some("not a reply's".into()), ..message(1, Role::User, "2+2?") };
        let chat = chat_messages("", &[turn(asked, vec![]), turn(thought, vec![])]);
        assert_eq!(chat[1].reasoning_content.as_deref(), Some("2 and 2 make 4"), "a reply's reasoning goes back to the template");
        assert_eq!(chat[0].reasoning_content, None);
    }

    #[test]
    fn a_reply_with_tool_calls_becomes_its_rounds_with_their_results() {
        use crate::chat::tool_rounds::sample_call;
        use confab_store::ToolCallStatus;
        let reply = Message {
            tool_calls: vec![sample_call(0, 0, 12, ToolCallStatus::Done), sample_call(0, 1, 12, ToolCallStatus::Failed)],
            ..message(2, Role::Assistant, "Let me look.Found it.")
        };
        let chat = chat_messages("", &[turn(message(1, Role::User, "Read it."), vec![]), turn(reply, vec![])]);
        let shape: Vec<(&str, &str, usize)> = chat.iter().map(|m| (m.role.as_str(), m.content.as_str(), m.tool_calls.len())).collect();
        assert_eq!(
            shape,
            [
                ("user", "Read it.", 0),
                ("assistant", "Let me look.", 2),
                ("tool", "hello", 0),
                ("tool", "Error: the call failed", 0),
                ("assistant", "Found it.", 0)
            ]
        );
        assert_eq!(chat[2].tool_call_id.as_deref(), Some(chat[1].tool_calls[0].id.as_str()), "a result answers its call");
        assert_eq!(chat[1].tool_calls[0].arguments, serde_json::json!({}));
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
        let branch = [turn(message(1, Role::User, "hi"), vec![])];
        assert_eq!(chat_messages(system_prompt(&chat, &settings), &branch)[0].content, "Be brief.");
        chat.system_prompt = Some("Answer in French.".into());
        let turns = chat_messages(system_prompt(&chat, &settings), &branch);
        assert_eq!((turns[0].role.as_str(), turns[0].content.as_str()), ("system", "Answer in French."));
    }
}
