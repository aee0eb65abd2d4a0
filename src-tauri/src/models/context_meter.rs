//! The context meter: how much of the loaded model's context the open chat takes with the
//! draft being typed. Counted with the model's own tokenizer and template, away from the
//! engine thread; the conversation's part is kept between calls, so a keystroke costs only the
//! draft's tokens. Attachments waiting in the composer count too: their soft tokens are measured
//! by the model's processor once per set of files.

use std::sync::Mutex;

use confab_engine::{ChatMessage, EngineError};
use confab_engine::{Engine, ModelId, Prompt};
use confab_media::MediaItem;
use confab_turn::prompt_budget;

use super::slot::Current;
use crate::sync::lock;

/// What the window's meter shows, and what it warns about before sending.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub struct ContextUse {
    /// Tokens of the chat as it would be sent now, the draft as its newest message.
    pub used: usize,
    /// Tokens of the system prompt and the draft alone, as a new chat would send them.
    pub alone: usize,
    /// What a prompt may take: the context less the room kept for the reply. Past it the
    /// oldest turns are left out (`ContextPolicy::DropOldestTurns`); a newest message that is
    /// past it alone is refused.
    pub limit: usize,
    /// The model's context length.
    pub context: usize,
}

/// The counts that stay the same while the user types, and what they were counted for.
struct Base {
    model: ModelId,
    history: Vec<ChatMessage>,
    /// The history and an empty user message: where the draft goes.
    chat: usize,
    /// The system prompt (if any) and an empty user message.
    fresh: usize,
}

/// The tokens the composer's attachments add to a message, and what they were counted for.
struct Attached {
    model: ModelId,
    media: Vec<MediaItem>,
    tokens: usize,
}

/// Keeps the open chat's counts; one chat is open at a time.
#[derive(Default)]
pub struct ContextMeter {
    base: Mutex<Option<Base>>,
    attached: Mutex<Option<Attached>>,
}

impl ContextMeter {
    /// How full the context would be with `draft` and its attachments `media` sent after
    /// `history` (the system prompt first, then the branch). Blocks: call it off the async
    /// runtime. Only media go through the engine thread, which measures their soft tokens;
    /// once per change.
    pub fn measure(
        &self,
        engine: &Engine,
        model: &Current,
        history: Vec<ChatMessage>,
        draft: &str,
        media: Vec<MediaItem>,
        max_tokens: u32,
    ) -> Result<ContextUse, EngineError> {
        let (chat, fresh) = self.base_counts(engine, model, history)?;
        let draft = model.counter.text(draft)? + self.attached_tokens(engine, model, media)?;
        let context = model.info.context_length;
        Ok(ContextUse { used: chat + draft, alone: fresh + draft, limit: prompt_budget(max_tokens, context), context })
    }

    fn base_counts(&self, engine: &Engine, model: &Current, history: Vec<ChatMessage>) -> Result<(usize, usize), EngineError> {
        if let Some(base) = lock(&self.base).as_ref().filter(|b| b.model == model.id && b.history == history) {
            return Ok((base.chat, base.fresh));
        }
        let system: Vec<ChatMessage> = history.iter().take_while(|m| m.role == "system").cloned().collect();
        let fresh = model.counter.chat(&with_empty_draft(system))?;
        let chat = if history.iter().any(|m| !m.media.is_empty()) {
            engine.tokenize(model.id, Prompt::Chat(with_empty_draft(history.clone())))?.len()
        } else {
            model.counter.chat(&with_empty_draft(history.clone()))?
        };
        *lock(&self.base) = Some(Base { model: model.id, history, chat, fresh });
        Ok((chat, fresh))
    }

    /// What `media` add to an empty user message: their soft tokens and the template's markers.
    /// Files the model cannot read count nothing: the composer says so when they are attached.
    fn attached_tokens(&self, engine: &Engine, model: &Current, media: Vec<MediaItem>) -> Result<usize, EngineError> {
        if media.is_empty() {
            return Ok(0);
        }
        if let Some(kept) = lock(&self.attached).as_ref().filter(|a| a.model == model.id && a.media == media) {
            return Ok(kept.tokens);
        }
        let empty = model.counter.chat(&[ChatMessage::user("")])?;
        let tokens = match engine.tokenize(model.id, Prompt::Chat(vec![ChatMessage::user("").with_media(media.clone())])) {
            Ok(ids) => ids.len().saturating_sub(empty),
            Err(error) => {
                tracing::debug!(%error, "the composer's attachments are not counted");
                0
            }
        };
        *lock(&self.attached) = Some(Attached { model: model.id, media, tokens });
        Ok(tokens)
    }
}

fn with_empty_draft(mut messages: Vec<ChatMessage>) -> Vec<ChatMessage> {
    messages.push(ChatMessage::user(""));
    messages
}

#[cfg(test)]
mod tests {
    use super::*;
    use confab_engine::EngineOptions;
    use std::path::Path;

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny").join(name)
    }

    /// The tiny llama fixture: a real tokenizer and chat template, a 256-token context.
    fn tiny_llama(engine: &Engine) -> Current {
        tiny(engine, "llama")
    }

    fn tiny(engine: &Engine, name: &str) -> Current {
        Current::load_for_test(engine, &fixture(name))
    }

    fn exact(engine: &Engine, model: &Current, messages: &[ChatMessage]) -> usize {
        engine.tokenize(model.id, Prompt::Chat(messages.to_vec())).expect("tokenize").len()
    }

    #[test]
    fn the_meter_counts_the_chat_and_the_draft_as_the_engine_would_send_them() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let model = tiny_llama(&engine);
        let meter = ContextMeter::default();
        let history =
            vec![ChatMessage::system("You answer briefly."), ChatMessage::user("What comes after three?"), ChatMessage::assistant("Four.")];
        for draft in ["And after four?", "A longer draft, with punctuation; and numbers 1 2 3 — and more words."] {
            let used = meter.measure(&engine, &model, history.clone(), draft, vec![], 16).unwrap();
            let sent: Vec<ChatMessage> = history.iter().cloned().chain([ChatMessage::user(draft)]).collect();
            // The draft's tokens are counted on their own and added: a token may merge or split
            // where the draft meets the template's text.
            assert!(used.used.abs_diff(exact(&engine, &model, &sent)) <= 2, "{used:?} against {}", exact(&engine, &model, &sent));
            let alone = [history[0].clone(), ChatMessage::user(draft)];
            assert!(used.alone.abs_diff(exact(&engine, &model, &alone)) <= 2);
            assert_eq!(used.context, 256);
            assert_eq!(used.limit, 256 - 16, "room is kept for the reply");
        }
    }

    #[test]
    fn a_long_draft_is_measured_past_the_limit_and_a_new_history_is_counted_again() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let model = tiny_llama(&engine);
        let meter = ContextMeter::default();
        let paste = "words and more words. ".repeat(2_000);
        let used = meter.measure(&engine, &model, vec![], &paste, vec![], 0).unwrap();
        assert!(used.alone > used.limit && used.used == used.alone, "{used:?}");
        assert_eq!(used.limit, 256 - 64, "max_tokens 0: a quarter of the context is kept for the reply");

        let short = meter.measure(&engine, &model, vec![], "hi", vec![], 0).unwrap();
        let longer =
            meter.measure(&engine, &model, vec![ChatMessage::user("hello"), ChatMessage::assistant("hi there")], "hi", vec![], 0).unwrap();
        assert!(longer.used > short.used, "a changed history is not served from the kept counts");
        assert_eq!(longer.alone, short.alone);
    }

    #[test]
    fn attachments_waiting_in_the_composer_count_as_the_engine_would_send_them() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let model = tiny(&engine, "gemma4");
        let meter = ContextMeter::default();
        let photo = MediaItem::image(fixture("gemma4/media/gradient.png"));
        let history = vec![ChatMessage::user("Hello."), ChatMessage::assistant("Hi.")];
        let without = meter.measure(&engine, &model, history.clone(), "What is this?", vec![], 16).unwrap();
        let with = meter.measure(&engine, &model, history.clone(), "What is this?", vec![photo.clone()], 16).unwrap();
        let sent: Vec<ChatMessage> =
            history.iter().cloned().chain([ChatMessage::user("What is this?").with_media(vec![photo.clone()])]).collect();
        // Tolerance: as for text, a token may merge or split where the draft meets the template.
        assert!(with.used.abs_diff(exact(&engine, &model, &sent)) <= 2, "{with:?} against {}", exact(&engine, &model, &sent));
        assert!(with.used > without.used + 10, "the image's soft tokens count: {without:?} then {with:?}");
        assert_eq!(with.alone - without.alone, with.used - without.used);
    }
}
