//! Counting prompt tokens away from the engine thread. The app's context meter counts while
//! the user types; it must never wait behind a reply, nor make one wait.

use std::sync::Arc;

use crate::error::{EngineError, Result};
use crate::text::{ChatMessage, ChatOptions, ChatTemplate, PromptEnd, Tokenizer};

/// A loaded model's tokenizer and chat template, shared with it (cloning is cheap). It counts
/// text only: media items have their soft tokens measured by the model's processor, which
/// lives on the engine thread (`Engine::tokenize`).
#[derive(Debug, Clone)]
pub struct TokenCounter {
    tokenizer: Tokenizer,
    template: Option<Arc<ChatTemplate>>,
}

impl TokenCounter {
    pub(crate) fn new(tokenizer: Tokenizer, template: Option<Arc<ChatTemplate>>) -> Self {
        Self { tokenizer, template }
    }

    /// The prompt tokens of a text-only conversation, as `Prompt::Chat` runs it.
    pub fn chat(&self, messages: &[ChatMessage]) -> Result<usize> {
        if messages.iter().any(|m| !m.media.is_empty()) {
            return Err(EngineError::invalid("messages", "the counter takes text only; count media with Engine::tokenize"));
        }
        Ok(chat_ids(&self.tokenizer, self.template.as_deref(), messages, PromptEnd::NewReply, &ChatOptions::default())?.len())
    }

    /// The tokens of `text` on its own, with no special tokens.
    pub fn text(&self, text: &str) -> Result<usize> {
        Ok(self.tokenizer.encode(text, false)?.len())
    }
}

/// A text-only conversation through the chat template, ending as `end` says.
pub(crate) fn chat_ids(
    tokenizer: &Tokenizer,
    template: Option<&ChatTemplate>,
    messages: &[ChatMessage],
    end: PromptEnd,
    chat: &ChatOptions,
) -> Result<Vec<u32>> {
    let template = template.ok_or_else(|| EngineError::Template("this model has no chat template; send plain text instead".into()))?;
    let final_text = messages.last().map_or("", |m| m.content.as_str());
    tokenizer.encode_prompt(&template.render_prompt(messages, final_text, end, chat)?)
}
