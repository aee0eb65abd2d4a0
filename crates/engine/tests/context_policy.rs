//! The context policy: a conversation longer than the model's context either is refused or
//! loses its oldest turns (never the system prompt or the newest message), and the plan says
//! how many went. The tiny llama's context is 256 tokens.

use std::path::{Path, PathBuf};

use confab_engine::model::LoadOptions;
use confab_engine::runtime::{ContextPolicy, Engine, EngineOptions, Event, ModelId, Plan, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_engine::EngineError;

const CONTEXT: usize = 256;
const MAX_TOKENS: u32 = 8;

fn tiny_llama() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/llama")
}

fn engine() -> (Engine, ModelId) {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(tiny_llama(), LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

/// A system prompt, then `turns` user/assistant pairs, then the newest question.
fn chat(turns: usize) -> Vec<ChatMessage> {
    let mut messages = vec![ChatMessage::system("You answer briefly.")];
    for i in 0..turns {
        messages.push(ChatMessage::user(format!("Question {i}: what comes after {i} in the list of numbers?")));
        messages.push(ChatMessage::assistant(format!("After {i} comes {} in the list.", i + 1)));
    }
    messages.push(ChatMessage::user("And the newest question is this one."));
    messages
}

fn request(model: ModelId, messages: Vec<ChatMessage>, policy: ContextPolicy) -> Request {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = MAX_TOKENS;
    let mut request = Request::new(model, Prompt::Chat(messages), sampling);
    request.context_policy = policy;
    request
}

/// The plan, or the error.
fn run(engine: &Engine, request: Request) -> Result<Plan, EngineError> {
    let mut plan = None;
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Error(e) => return Err(e),
            Event::Done { .. } => return Ok(plan.expect("a plan before done")),
            _ => {}
        }
    }
    panic!("the request neither finished nor failed");
}

fn tokens(engine: &Engine, model: ModelId, messages: &[ChatMessage]) -> usize {
    engine.tokenize(model, Prompt::Chat(messages.to_vec())).unwrap().len()
}

#[test]
fn a_long_chat_loses_its_oldest_turns_and_says_how_many() {
    let (engine, model) = engine();
    let messages = chat(12);
    assert!(tokens(&engine, model, &messages) > CONTEXT, "the chat must be longer than the context");

    let plan = run(&engine, request(model, messages.clone(), ContextPolicy::DropOldestTurns)).unwrap();
    let dropped = plan.dropped_messages;
    assert!(dropped > 0);
    // What ran: the system prompt, then everything after the `dropped` oldest turns.
    let kept: Vec<ChatMessage> = [messages[0].clone()].into_iter().chain(messages[1 + dropped..].iter().cloned()).collect();
    assert_eq!(plan.prompt_tokens, tokens(&engine, model, &kept), "the system prompt and the newest turns stay, in order");
    assert!(plan.prompt_tokens + MAX_TOKENS as usize <= CONTEXT, "room is left for the reply");
    // Not much more than needed went: with two fewer dropped, it would not have fit.
    let fewer: Vec<ChatMessage> = [messages[0].clone()].into_iter().chain(messages[dropped - 1..].iter().cloned()).collect();
    assert!(tokens(&engine, model, &fewer) + MAX_TOKENS as usize > CONTEXT, "dropped {dropped}: at most one more than needed");
}

#[test]
fn a_long_chat_whose_last_reply_is_continued_loses_its_oldest_turns_and_keeps_the_reply_open() {
    let (engine, model) = engine();
    let mut messages = chat(12);
    messages.push(ChatMessage::assistant("The newest answer was cut"));
    let mut request = request(model, messages.clone(), ContextPolicy::DropOldestTurns);
    request.prompt = Prompt::Continue(messages.clone());
    let plan = run(&engine, request).unwrap();
    let dropped = plan.dropped_messages;
    assert!(dropped > 0);
    let kept: Vec<ChatMessage> = [messages[0].clone()].into_iter().chain(messages[1 + dropped..].iter().cloned()).collect();
    let continued = engine.tokenize(model, Prompt::Continue(kept.clone())).unwrap();
    assert_eq!(plan.prompt_tokens, continued.len(), "the kept turns, the cut reply left open");
    // As the kept chat with the reply whole, up to where the reply's end of turn began.
    let whole = engine.tokenize(model, Prompt::Chat(kept)).unwrap();
    assert!(whole.len() > continued.len() && whole.starts_with(&continued));
}

#[test]
fn a_chat_that_fits_loses_nothing() {
    let (engine, model) = engine();
    let messages = chat(2);
    let plan = run(&engine, request(model, messages.clone(), ContextPolicy::DropOldestTurns)).unwrap();
    assert_eq!(plan.dropped_messages, 0);
    assert_eq!(plan.prompt_tokens, tokens(&engine, model, &messages));
}

#[test]
fn refusing_is_the_default_and_says_what_to_do() {
    let (engine, model) = engine();
    let err = run(&engine, Request::new(model, Prompt::Chat(chat(12)), SamplingParams::greedy())).unwrap_err();
    assert!(matches!(err, EngineError::ContextOverflow { context: CONTEXT, .. }), "{err:?}");
    assert!(err.to_string().contains("Shorten the conversation"), "{err}");
}

#[test]
fn a_newest_message_longer_than_the_context_is_refused() {
    let (engine, model) = engine();
    let mut messages = chat(3);
    messages.push(ChatMessage::user("numbers ".repeat(300)));
    let err = run(&engine, request(model, messages, ContextPolicy::DropOldestTurns)).unwrap_err();
    assert!(matches!(err, EngineError::ContextOverflow { context: CONTEXT, .. }), "{err:?}");
    // The engine still serves.
    assert!(run(&engine, request(model, chat(1), ContextPolicy::DropOldestTurns)).is_ok());
}

#[test]
fn the_token_counter_counts_off_the_engine_thread_as_the_engine_does() {
    let (engine, model) = engine();
    let counter = engine.token_counter(model).unwrap();
    let messages = chat(3);
    let counted = std::thread::spawn({
        let (counter, messages) = (counter.clone(), messages.clone());
        move || counter.chat(&messages).unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(counted, tokens(&engine, model, &messages));
    assert!(counter.text("What comes after three?").unwrap() > 0);
    // Media are measured by the model's processor, on the engine thread: the counter says so.
    let photo = ChatMessage::user("this").with_media([confab_engine::media::MediaItem::image("/nowhere.png")]);
    let refused = counter.chat(&[photo]).unwrap_err().to_string();
    assert!(refused.contains("Engine::tokenize"), "{refused}");
}
