//! The context policy: what of a conversation goes into the model's context when all of it
//! does not fit. The app, `confab chat` and the server ask for it per request; the engine
//! applies it when the request arrives, on the prompt it tokenizes anyway.

use crate::error::{EngineError, Result};
use crate::media::MediaLimits;
use crate::runtime::ready_model::ReadyModel;
use crate::runtime::request::{ContextPolicy, Prompt};
use crate::runtime::tokenized_prompt::{prepare, prepare_chat, TokenizedPrompt};
use crate::text::{ChatMessage, ChatOptions, PromptEnd};

/// Tokens kept free for the reply when turns are dropped: what the reply may use, but at most
/// a quarter of the context (a long max_tokens must not empty the conversation).
pub fn room_for_reply(max_tokens: u32, context: usize) -> usize {
    match max_tokens as usize {
        0 => context / 4,
        n => n.min(context / 4),
    }
    .max(1)
}

/// What a prompt may use of the context: the context less the room kept for the reply. The one
/// place this is subtracted (the app's context meter and document search ask it too).
pub fn prompt_budget(max_tokens: u32, context: usize) -> usize {
    context - room_for_reply(max_tokens, context)
}

/// The prompt, fitted to the context under `policy`: returns it prepared, and how many
/// messages were left out (they leave `prompt` too, so that what runs next, the prefix cache
/// included, sees the prompt that really ran).
pub fn fit(
    model: &ReadyModel,
    prompt: &mut Prompt,
    chat: &ChatOptions,
    policy: ContextPolicy,
    max_tokens: u32,
    limits: &MediaLimits,
) -> Result<(TokenizedPrompt, usize)> {
    let context = model.config().max_position;
    let prepared = prepare(model, prompt, chat, limits)?;
    let budget = prompt_budget(max_tokens, context);
    // A continuation drops turns as a new reply does: the reply it continues is the newest message.
    let drop_turns = policy == ContextPolicy::DropOldestTurns && prepared.ids.len() > budget;
    match prompt {
        Prompt::Chat(messages) if drop_turns => drop_oldest_turns(model, messages, PromptEnd::NewReply, chat, prepared, budget, limits),
        Prompt::Continue(messages) if drop_turns => {
            drop_oldest_turns(model, messages, PromptEnd::InFinalMessage, chat, prepared, budget, limits)
        }
        _ if prepared.ids.len() >= context => Err(EngineError::ContextOverflow { prompt: prepared.ids.len(), context }),
        _ => Ok((prepared, 0)),
    }
}

fn drop_oldest_turns(
    model: &ReadyModel,
    messages: &mut Vec<ChatMessage>,
    end: PromptEnd,
    chat: &ChatOptions,
    mut prepared: TokenizedPrompt,
    budget: usize,
    limits: &MediaLimits,
) -> Result<(TokenizedPrompt, usize)> {
    let first = messages.iter().position(|m| m.role != "system").unwrap_or(messages.len());
    // A first guess from each message's own size, so that a long chat is prepared again once
    // or twice rather than once per dropped turn (a prompt with audio decodes it each time).
    let mut drop = turns_to_drop(model, messages, first, &prepared, budget);
    let mut dropped = 0;
    loop {
        // The newest message always stays.
        let droppable = messages.len().saturating_sub(first + 1);
        if droppable == 0 {
            let context = model.config().max_position;
            return Err(EngineError::ContextOverflow { prompt: prepared.ids.len(), context });
        }
        let n = drop.clamp(1, droppable);
        messages.drain(first..first + n);
        dropped += n;
        prepared = prepare_chat(model, messages, end, chat, limits)?;
        if prepared.ids.len() <= budget {
            tracing::info!(dropped, prompt_tokens = prepared.ids.len(), "left out the oldest turns to fit the context");
            return Ok((prepared, dropped));
        }
        drop = 1;
    }
}

/// How many of the oldest turns must go for `prepared` to fit `budget`, estimated from each
/// message's text and media (the template's own tokens spread evenly over the messages).
fn turns_to_drop(model: &ReadyModel, messages: &[ChatMessage], first: usize, prepared: &TokenizedPrompt, budget: usize) -> usize {
    let excess = prepared.ids.len().saturating_sub(budget);
    let soft_tokens = prepared.media_tokens();
    let mut media = soft_tokens.iter();
    let own: Vec<usize> = messages
        .iter()
        .map(|m| {
            let text = model.tokenizer.encode_prompt(&m.content).map_or(0, |ids| ids.len());
            text + m.media.iter().map(|_| media.next().copied().unwrap_or(0)).sum::<usize>()
        })
        .collect();
    let template = prepared.ids.len().saturating_sub(own.iter().sum()) / messages.len().max(1);
    let mut freed = 0;
    for (n, size) in own.iter().skip(first).enumerate() {
        freed += size + template;
        if freed >= excess {
            return n + 1;
        }
    }
    own.len()
}
