//! A prompt made ready to run: token ids through the chat template, media expanded to their
//! soft tokens, checked against the vocabulary. Done once per request, when it arrives.

use crate::constraint::Guide;
use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::count::chat_ids;
use crate::runtime::media::prompt::{self as media_prompt, MediaPrompt};
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::Prompt;
use crate::text::{ChatMessage, ChatOptions, PromptEnd};

/// The prompt's ids and, when it carries media, where each item is.
pub(crate) fn prepare(model: &ReadyModel, prompt: &Prompt, chat: &ChatOptions, limits: &MediaLimits) -> Result<TokenizedPrompt> {
    match prompt {
        Prompt::Chat(messages) => prepare_chat(model, messages, PromptEnd::NewReply, chat, limits),
        Prompt::Continue(messages) => prepare_chat(model, messages, PromptEnd::InFinalMessage, chat, limits),
        Prompt::Tokens(ids) => checked(model, ids.clone(), None),
        Prompt::Text(text) => checked(model, model.tokenizer.encode_prompt(text)?, None),
    }
}

/// A conversation through the chat template, ending as `end` says, its media expanded to their
/// soft tokens.
pub(crate) fn prepare_chat(
    model: &ReadyModel,
    messages: &[ChatMessage],
    end: PromptEnd,
    chat: &ChatOptions,
    limits: &MediaLimits,
) -> Result<TokenizedPrompt> {
    if messages.iter().any(|m| !m.media.is_empty()) {
        let media = media_prompt::build(model, messages, end, chat, limits)?;
        let mut prepared = checked(model, media.ids.clone(), Some(media))?;
        prepared.reply_opening = reply_opening(model, &prepared.ids, end, chat);
        return Ok(prepared);
    }
    let mut prepared = checked(model, chat_ids(&model.tokenizer, model.template.as_deref(), messages, end, chat)?, None)?;
    prepared.reply_opening = reply_opening(model, &prepared.ids, end, chat);
    Ok(prepared)
}

/// The part of the reply the prompt already wrote: a forced start, or the opening of a
/// reasoning block the template put in its generation prompt.
fn reply_opening(model: &ReadyModel, ids: &[u32], end: PromptEnd, chat: &ChatOptions) -> Option<String> {
    if end != PromptEnd::NewReply {
        return None;
    }
    if let Some(prefix) = &chat.reply_prefix {
        return Some(prefix.clone());
    }
    let markers = model.reply_format.reasoning?;
    // The generation prompt is the last few tokens.
    let tail = model.tokenizer.decode(&ids[ids.len().saturating_sub(16)..], false).ok()?;
    model.reply_format.starts_in_reasoning(&tail).then(|| markers.open.to_string())
}

fn checked(model: &ReadyModel, ids: Vec<u32>, media: Option<MediaPrompt>) -> Result<TokenizedPrompt> {
    if ids.is_empty() {
        return Err(EngineError::invalid("prompt", "the prompt is empty; type something first"));
    }
    let vocab = model.config().vocab_size as u32;
    if let Some(bad) = ids.iter().find(|&&id| id >= vocab) {
        return Err(EngineError::invalid("prompt", format!("token id {bad} is outside the vocabulary (size {vocab})")));
    }
    Ok(TokenizedPrompt { ids, media, dropped_messages: 0, reply_opening: None, guide: None })
}

/// A prompt ready to run: its ids and, when it carries media, where each item is. Made when the
/// request arrives, so admission knows its size.
pub struct TokenizedPrompt {
    pub ids: Vec<u32>,
    pub(crate) media: Option<MediaPrompt>,
    /// Oldest turns the context policy left out.
    pub(crate) dropped_messages: usize,
    /// The reply's start that the prompt wrote (`reply_opening`).
    pub(crate) reply_opening: Option<String>,
    /// The reply's matcher, when the request has a constraint (compiled by the check, so a
    /// grammar that cannot be used fails before any work, and is compiled once).
    pub(crate) guide: Option<Guide>,
}

impl TokenizedPrompt {
    /// The soft tokens of each media item, in prompt order.
    pub(crate) fn media_tokens(&self) -> Vec<usize> {
        self.media.as_ref().map_or(vec![], |m| m.items.iter().map(|i| i.span.len).collect())
    }
}
