//! A short title for a new conversation: a provisional one from the first message at once,
//! then the model's own, written in the background after the first reply.

use std::sync::Arc;

use confab_engine::ChatMessage;
use confab_engine::Prompt;
use confab_engine::SamplingParams;
use confab_store::ConversationId;
use confab_turn::{ChatTurn, Thinking};
use tauri::{AppHandle, Emitter};

use super::local_model;
use crate::state::AppState;

/// What a conversation is called before it has a first message.
pub const UNTITLED: &str = "New chat";
/// Titles written from a message or by the model.
const MAX_CHARS: usize = 60;
/// Titles the user types: enough for any real name, short enough for a sidebar row and a
/// search result.
pub const MAX_RENAME_CHARS: usize = 120;

/// The first words of the first message, until the model has written a title.
pub fn provisional(first_message: &str) -> String {
    let words: Vec<&str> = first_message.split_whitespace().take(8).collect();
    let title = clean(&words.join(" "));
    if title.is_empty() {
        UNTITLED.into()
    } else {
        title
    }
}

/// One line, no quotes or "Title:", at most `MAX_CHARS` characters.
pub fn clean(raw: &str) -> String {
    let line = raw.lines().map(str::trim).find(|l| !l.is_empty()).unwrap_or("");
    let line = line.strip_prefix("Title:").or_else(|| line.strip_prefix("title:")).unwrap_or(line);
    let line = line.trim().trim_matches(|c: char| matches!(c, '"' | '\'' | '*' | '#' | '`' | '“' | '”')).trim();
    cut(line.trim_end_matches(['.', ':']), MAX_CHARS)
}

/// At most `max` characters, an ellipsis marking a cut.
pub fn cut(title: &str, max: usize) -> String {
    if title.chars().count() <= max {
        return title.to_string();
    }
    let kept: String = title.chars().take(max - 1).collect();
    format!("{}…", kept.trim_end())
}

/// Asks the loaded model for a title and renames the conversation if it is still provisional.
/// Runs after the reply, on the engine thread's queue, so the chat never waits for it.
pub fn write_in_background(app: AppHandle, state: Arc<AppState>, conversation: ConversationId, first_message: String) {
    let Some(model) = state.model.current() else { return };
    tauri::async_runtime::spawn(async move {
        let expected = provisional(&first_message);
        let prompt = Prompt::Chat(vec![ChatMessage::new(
            "user",
            format!("Write a title of at most six words for a chat that begins with the message below. Reply with the title only.\n\n{first_message}"),
        )]);
        let mut turn = ChatTurn::new(prompt, SamplingParams { max_tokens: 16, ..SamplingParams::greedy() });
        // A thinking model answers at once where its template can be told so; reasoning it
        // writes anyway is not the title.
        turn.thinking = Thinking::on(false);
        let Ok(mut request) = turn.request(&model.info, model.id) else { return };
        request.reuse_prefix = false;
        let format = model.info.reply_format;
        let engine_state = state.clone();
        let text = tauri::async_runtime::spawn_blocking(move || local_model::answer_of(format, engine_state.engine.generate(request)))
            .await
            .ok()
            .flatten()
            .unwrap_or_default();
        let title = clean(&text);
        let Ok(current) = state.store.conversation(conversation).await else { return };
        if title.is_empty() || current.title != expected {
            return; // the user renamed it meanwhile, or the model gave nothing usable
        }
        if state.store.rename_conversation(conversation, &title).await.is_ok() {
            if let Ok(updated) = state.store.conversation(conversation).await {
                let _ = app.emit("conversation-updated", updated);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn titles_are_one_clean_short_line() {
        assert_eq!(clean("\"Paris, the Capital of France.\"\nMore"), "Paris, the Capital of France");
        assert_eq!(clean("Title: Weekend plans"), "Weekend plans");
        assert!(clean(&"word ".repeat(40)).chars().count() <= MAX_CHARS);
        assert_eq!(provisional("   "), UNTITLED);
        assert_eq!(provisional("What is the capital of France?"), "What is the capital of France?");
    }

    #[test]
    fn a_cut_title_keeps_its_limit_and_says_it_was_cut() {
        assert_eq!(cut("Holiday", 5 + 2), "Holiday");
        assert_eq!(cut("Holiday plans", 8), "Holiday…");
        assert_eq!(cut(&"é".repeat(5000), MAX_RENAME_CHARS).chars().count(), MAX_RENAME_CHARS);
    }
}
