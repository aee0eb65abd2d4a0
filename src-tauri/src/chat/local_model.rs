//! A reply written by the loaded model: the engine request it is asked with (the chat's
//! thinking switch among the template's switches), and its streamed text read with the
//! engine's reply parser, so that a thinking model's reasoning reaches the window and the
//! store apart from its answer.

use std::time::Instant;

use confab_engine::ReplyFormat;
use confab_engine::{ContextPolicy, Event, Prompt, Request, StopReason};
use confab_store::{MessageId, ReplyEnd, ReplyStats, ReplyText, SpeculativeReplyStats, Store};
use confab_turn::{ChatTurn, ReplyReader, Thinking, ToolChoice, Tools, TurnError, TurnEvent};

use super::events::{Outcome, ReplyEvent};
use crate::models::slot::Current;
use crate::settings::Settings;
use crate::tools::call::ModelCall;

/// The engine request for `prompt` with the loaded model, as a chat turn (`confab_turn`): the
/// model's own sampling with the user's settings over it (its stop strings kept), the oldest
/// turns left out of a chat too long for the context, the chat's thinking switch and the
/// settings' reasoning effort where the template reads them, and `tools` with their choice (a
/// required call is held by the model's call grammar, as on the server).
pub fn request(model: &Current, prompt: Prompt, settings: &Settings, thinking: bool, tools: Tools) -> Result<Request, TurnError> {
    let mut turn = ChatTurn::new(prompt, settings.sampling(&model.info.default_sampling));
    // A long chat goes on: the engine leaves its oldest turns out, and the plan says so.
    turn.context_policy = ContextPolicy::DropOldestTurns;
    turn.thinking = Thinking { enabled: Some(thinking), effort: settings.reasoning_effort.map(|e| e.as_str().to_string()) };
    turn.tools = tools;
    let mut request = turn.request(&model.info, model.id)?;
    request.speculative = settings.speculative(model.draft);
    // The window shows a denoising model's canvas forming (other models send no canvases).
    request.canvas_steps = true;
    Ok(request)
}

/// The tools a reply is offered: the model decides whether to call one.
pub fn offered(definitions: Vec<serde_json::Value>) -> Tools {
    Tools { definitions, choice: ToolChoice::Auto }
}

/// A whole reply's answer, its reasoning left out (for the model's own titles); `None` when it
/// failed.
pub fn answer_of(format: ReplyFormat, events: impl IntoIterator<Item = Event>) -> Option<String> {
    let mut reader = ReplyReader::for_format(format, &Tools::default());
    let mut answer = String::new();
    for event in events.into_iter().flat_map(|event| reader.read(event)) {
        match event {
            TurnEvent::Text(text) => answer.push_str(&text),
            TurnEvent::Failed(_) => return None,
            _ => {}
        }
    }
    Some(answer)
}

/// Saves a piece of the reply, then shows it: the window never shows text that a kill (or a
/// crash) would lose. A piece that could not be saved is not shown either, so the window and
/// the store agree; the reply goes on and its end says how it was kept. One small insert per
/// piece (see `persisting_each_piece_costs_little` for what it costs).
fn keep_then_send(store: &Store, reply: MessageId, part: ReplyText, text: String, send: &dyn Fn(ReplyEvent)) {
    match tauri::async_runtime::block_on(store.append_reply_part(reply, part, &text)) {
        Ok(()) => send(match part {
            ReplyText::Reasoning => ReplyEvent::Reasoning { text },
            ReplyText::Answer => ReplyEvent::Token { text },
        }),
        Err(error) => tracing::warn!(%error, "could not save the reply's text; it is not shown either"),
    }
}

/// How long the model has been thinking, until its time is saved.
struct ThoughtClock {
    /// When the first reasoning came.
    since: Option<Instant>,
}

impl ThoughtClock {
    /// The model stopped thinking (its answer began, or the reply ended): how long it thought
    /// is saved, once (its reasoning is saved already, piece by piece).
    fn over(&mut self, store: &Store, reply: MessageId, send: &dyn Fn(ReplyEvent)) {
        let Some(since) = self.since.take() else { return };
        let reasoning_ms = since.elapsed().as_millis() as u64;
        if let Err(error) = tauri::async_runtime::block_on(store.set_reasoning_time(reply, reasoning_ms)) {
            tracing::warn!(%error, "could not save how long the model thought");
        }
        send(ReplyEvent::Thought { reasoning_ms });
    }
}

/// Why the engine stopped, as the reply keeps it; `None` for a reply stopped by the user.
fn stop_reason(reason: StopReason) -> Option<confab_store::StopReason> {
    match reason {
        StopReason::Eos => Some(confab_store::StopReason::EndOfTurn),
        StopReason::StopString => Some(confab_store::StopReason::StopString),
        StopReason::MaxTokens => Some(confab_store::StopReason::TokenLimit),
        StopReason::Context => Some(confab_store::StopReason::ContextFull),
        StopReason::Cancelled => None,
    }
}

/// Runs on a blocking thread: the engine's events, read through the model's reply parser,
/// become saved text and window events (`reasoning`, `thought`, `token`), and the tool calls
/// the model made (`tools`: the request's definitions). `thinking`: the reply goes on inside
/// its reasoning block (Continue after a cut mid-thought), which its prompt left open.
pub fn generate(
    store: &Store,
    model: &Current,
    events: impl IntoIterator<Item = Event>,
    tools: Vec<serde_json::Value>,
    reply: MessageId,
    thinking: bool,
    send: &dyn Fn(ReplyEvent),
) -> Outcome {
    let opening = model.info.reply_format.reasoning.filter(|_| thinking).map(|markers| Event::Text(markers.open.to_string()));
    read(store, &model.info.name, model.info.reply_format, opening.into_iter().chain(events), tools, reply, send)
}

fn read(
    store: &Store,
    model_name: &str,
    format: ReplyFormat,
    events: impl IntoIterator<Item = Event>,
    tools: Vec<serde_json::Value>,
    reply: MessageId,
    send: &dyn Fn(ReplyEvent),
) -> Outcome {
    // Without tools, call markup stays the answer's text. An opened reasoning block comes as
    // the reply's first text (`Request::reply_markup`).
    let mut reader = ReplyReader::for_format(format, &offered(tools));
    let mut calls = Vec::new();
    let mut thinking = ThoughtClock { since: None };
    // The speculative method the plan chose, for the reply's stats.
    let mut method = None;
    let mut events = events.into_iter();
    loop {
        // Events that end without an end (the engine stopped) read as a failure.
        let batch = match events.next() {
            Some(event) => reader.read(event),
            None => reader.stopped(),
        };
        for event in batch {
            match event {
                TurnEvent::Queued { reason, ahead } => send(ReplyEvent::Queued { reason, ahead }),
                TurnEvent::Plan(plan) => {
                    method = plan.speculative;
                    send(ReplyEvent::Plan { plan })
                }
                TurnEvent::Canvas(canvas) => send(ReplyEvent::Canvas { canvas }),
                TurnEvent::Reasoning(text) if !text.is_empty() => {
                    thinking.since.get_or_insert_with(Instant::now);
                    keep_then_send(store, reply, ReplyText::Reasoning, text, send);
                }
                TurnEvent::Text(text) if !text.is_empty() => {
                    thinking.over(store, reply, send);
                    keep_then_send(store, reply, ReplyText::Answer, text, send);
                }
                TurnEvent::Reasoning(_) | TurnEvent::Text(_) => {}
                TurnEvent::ToolCall { name, arguments, .. } => {
                    thinking.over(store, reply, send);
                    let arguments = match arguments {
                        serde_json::Value::Object(object) => Ok(object),
                        other => Err(other.to_string()),
                    };
                    calls.push(ModelCall { id: None, name, arguments });
                }
                TurnEvent::Done { reason, usage, timings } => {
                    thinking.over(store, reply, send);
                    // Thinking tokens are generated tokens: they count in the speed and the total.
                    let stats = ReplyStats {
                        prompt_tokens: usage.prompt as u32,
                        cached_tokens: usage.cached as u32,
                        generated_tokens: usage.generated as u32,
                        time_to_first_token_ms: (usage.generated > 0).then_some(timings.time_to_first_token_ms.round() as u64),
                        decode_tokens_per_second: (usage.generated > 1).then_some(timings.decode_tokens_per_s),
                        model: model_name.to_owned(),
                        speculative: method.zip(usage.speculative()).map(|(method, s)| SpeculativeReplyStats {
                            method: method.to_owned(),
                            proposed: s.proposed as u32,
                            accepted: s.accepted as u32,
                            acceptance_rate: s.acceptance_rate,
                            tokens_per_step: s.tokens_per_step,
                        }),
                        steps_per_canvas: usage.steps_per_canvas.iter().map(|&steps| steps as u32).collect(),
                        stop_reason: stop_reason(reason),
                    };
                    let end = if reason == StopReason::Cancelled { ReplyEnd::Stopped } else { ReplyEnd::Complete };
                    return Outcome { end, stats: Some(stats), calls };
                }
                TurnEvent::Failed(e) => {
                    thinking.over(store, reply, send);
                    return Outcome::ended(ReplyEnd::Error(crate::failure::engine_message(&e)));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::{ReasoningEffort, SpeculativeChoice};
    use confab_engine::ChatMessage;
    use confab_engine::{Engine, EngineOptions, Timings, Usage};
    use confab_store::{MessageStatus, NewConversation, Role};
    use std::sync::Mutex;

    /// Qwen3's way: the generation prompt opens `<think>` unless `enable_thinking` is false.
    const THINKING_TEMPLATE: &str = "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}\
        {% if add_generation_prompt %}<|im_start|>assistant\n\
        {% if enable_thinking is defined and enable_thinking is false %}<think>\n\n</think>\n\n{% else %}<think>\n{% endif %}{% endif %}";

    /// A store with one question asked and its reply started.
    fn started_reply() -> (tempfile::TempDir, Store, MessageId) {
        let dir = tempfile::tempdir().unwrap();
        let store = tauri::async_runtime::block_on(Store::open(dir.path().join("confab.db"))).unwrap();
        let reply = tauri::async_runtime::block_on(async {
            let chat = store.create_conversation(NewConversation { title: "t".into(), ..Default::default() }).await.unwrap().id;
            let question = store.add_message(chat, None, Role::User, "Why?").await.unwrap();
            store.start_reply(chat, question).await.unwrap()
        });
        (dir, store, reply)
    }

    fn finish(store: &Store, reply: MessageId, outcome: Outcome) -> confab_store::Message {
        tauri::async_runtime::block_on(async {
            store.finish_reply(reply, outcome.end, outcome.stats.as_ref()).await.unwrap();
            store.message(reply).await.unwrap()
        })
    }

    #[test]
    fn reasoning_streams_and_is_saved_apart_from_the_answer() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some(THINKING_TEMPLATE));
        let done = Event::Done { reason: StopReason::Eos, usage: Usage { generated: 9, ..Usage::default() }, timings: Timings::default() };
        let events =
            ["<think>", "\nLet me ", "see.\n</th", "ink>\n\nIt is", " 4."].map(|t| Event::Text(t.into())).into_iter().chain([done]);
        let sent = Mutex::new(Vec::new());
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|event| sent.lock().unwrap().push(event));

        let kinds: Vec<String> = sent
            .lock()
            .unwrap()
            .iter()
            .map(|event| match event {
                ReplyEvent::Reasoning { text } => format!("reasoning:{text}"),
                ReplyEvent::Thought { .. } => "thought".into(),
                ReplyEvent::Token { text } => format!("token:{text}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(kinds.concat(), "reasoning:Let me reasoning:see.\nthoughttoken:It istoken: 4.", "{kinds:?}");
        assert_eq!(outcome.stats.as_ref().map(|s| s.generated_tokens), Some(9), "thinking tokens are generated tokens");
        let saved = finish(&store, reply, outcome);
        assert_eq!((saved.reasoning.as_deref(), saved.content.as_str()), (Some("Let me see.\n"), "It is 4."));
        assert!(saved.reasoning_ms.is_some(), "how long it thought is kept");
    }

    #[test]
    fn a_reply_stopped_mid_thought_keeps_its_reasoning_and_its_time() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some(THINKING_TEMPLATE));
        let stopped = Event::Done { reason: StopReason::Cancelled, usage: Usage::default(), timings: Timings::default() };
        let events = [Event::Text("<think>\nHmm, ".into()), Event::Text("maybe".into()), stopped];
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|_| {});
        let saved = finish(&store, reply, outcome);
        assert_eq!(saved.status, MessageStatus::Stopped);
        assert_eq!((saved.reasoning.as_deref(), saved.content.as_str()), (Some("Hmm, maybe"), ""));
        assert!(saved.reasoning_ms.is_some());
    }

    #[test]
    fn each_piece_is_saved_before_the_window_is_sent_it() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some(THINKING_TEMPLATE));
        let events = ["<think>", "\nHmm", ", yes", "</think>\n\nIt", " is."].map(|t| Event::Text(t.into()));
        // At each event, what the store holds must already include everything sent so far.
        let sent = Mutex::new((String::new(), String::new()));
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|event| {
            let mut sent = sent.lock().unwrap();
            match event {
                ReplyEvent::Reasoning { text } => sent.0.push_str(&text),
                ReplyEvent::Token { text } => sent.1.push_str(&text),
                _ => {}
            }
            let kept = tauri::async_runtime::block_on(store.message(reply)).unwrap();
            assert_eq!((kept.reasoning.unwrap_or_default(), kept.content), sent.clone(), "shown before it was saved");
        });
        assert_eq!(finish(&store, reply, outcome).content, "It is.");
    }

    /// What saving each piece before the window is sent it costs: 2,000 pieces through `read`
    /// into a store on disk (WAL, synchronous = NORMAL, as the app's). The bound is loose (a
    /// busy CI machine); the figure is printed (`-- --nocapture`).
    #[test]
    fn persisting_each_piece_costs_little() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some("{{ messages }}"));
        let pieces = 2000;
        let done = Event::Done {
            reason: StopReason::MaxTokens,
            usage: Usage { generated: pieces, ..Usage::default() },
            timings: Timings::default(),
        };
        let events = (0..pieces).map(|i| Event::Text(format!(" w{i}"))).chain([done]);
        let started = Instant::now();
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|_| {});
        let each = started.elapsed() / pieces as u32;
        println!("{pieces} pieces saved one by one, then sent: {each:?} a piece");
        let saved = finish(&store, reply, outcome);
        assert_eq!(saved.content.split_whitespace().count(), pieces);
        assert_eq!(saved.stats.and_then(|s| s.stop_reason), Some(confab_store::StopReason::TokenLimit));
        assert!(each < std::time::Duration::from_millis(10), "{each:?} a piece: slower than a fast model writes them");
    }

    /// An echo tool as OpenAI's API (and the templates) take it.
    fn echo_tool() -> serde_json::Value {
        serde_json::json!({"type": "function", "function": {"name": "echo", "description": "Says it back.",
            "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}})
    }

    #[test]
    fn a_call_the_model_writes_is_taken_out_of_the_answer() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some("{% if tools %}<tool_call>{% endif %}"));
        let done = Event::Done { reason: StopReason::Eos, usage: Usage { generated: 12, ..Usage::default() }, timings: Timings::default() };
        let events = ["Let me check.", "<tool_call>\n{\"name\": \"echo\", ", "\"arguments\": {\"text\": \"hi\"}}\n</tool_call>"]
            .map(|t| Event::Text(t.into()))
            .into_iter()
            .chain([done]);
        let outcome = read(&store, "tiny", format, events, vec![echo_tool()], reply, &|_| {});
        let arguments = serde_json::json!({"text": "hi"}).as_object().cloned().unwrap();
        assert_eq!(outcome.calls, [ModelCall { id: None, name: "echo".into(), arguments: Ok(arguments) }]);
        let saved = finish(&store, reply, outcome);
        assert_eq!(saved.content, "Let me check.", "the call's markup is not the answer's text");

        // Without tools offered, the same text is the answer.
        let (_dir, store, reply) = started_reply();
        let events = ["<tool_call>\n{\"name\": \"echo\", \"arguments\": {}}\n</tool_call>"].map(|t| Event::Text(t.into()));
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|_| {});
        assert!(outcome.calls.is_empty());
    }

    #[test]
    fn the_next_round_reuses_the_cached_prompt_of_the_first() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        // The tiny Qwen3 with room for its template's tool preamble.
        let folder = tempfile::tempdir().unwrap();
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny/qwen3");
        for entry in std::fs::read_dir(&fixture).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), folder.path().join(entry.file_name())).unwrap();
        }
        let config_path = folder.path().join("config.json");
        let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
        config["max_position_embeddings"] = 4096.into();
        std::fs::write(&config_path, config.to_string()).unwrap();
        let model = Current::load_for_test(&engine, folder.path());
        let settings = Settings { max_tokens: 4, temperature: Some(0.0), ..Settings::default() };
        let usage_of = |request: Request| {
            for event in engine.generate(request) {
                match event {
                    Event::Done { usage, .. } => return usage,
                    Event::Error(e) => panic!("{e}"),
                    _ => {}
                }
            }
            panic!("the generation ended without Done");
        };
        let question = ChatMessage::user("Say hi through the echo tool.");
        let first = usage_of(request(&model, Prompt::Chat(vec![question.clone()]), &settings, true, offered(vec![echo_tool()])).unwrap());
        let mut call = ChatMessage::new("assistant", "");
        call.tool_calls =
            vec![confab_engine::ToolCall { id: "call_1".into(), name: "echo".into(), arguments: serde_json::json!({"text": "hi"}) }];
        let mut result = ChatMessage::new("tool", "hi");
        result.tool_call_id = Some("call_1".into());
        let second =
            usage_of(request(&model, Prompt::Chat(vec![question, call, result]), &settings, true, offered(vec![echo_tool()])).unwrap());
        assert!(second.prompt > first.prompt);
        assert!(second.cached >= first.prompt - 4, "round 2 reuses round 1's prompt: {second:?} after {first:?}");
    }

    #[test]
    fn a_title_is_the_answer_without_the_reasoning() {
        let format = ReplyFormat::detect(Some(THINKING_TEMPLATE));
        let events = ["<think>\nA title?", "</think>\n\nSky ", "colours"].map(|t| Event::Text(t.into()));
        assert_eq!(answer_of(format, events).as_deref(), Some("Sky colours"));
        assert_eq!(answer_of(format, [Event::Error(confab_engine::EngineError::EngineStopped)]), None);
    }

    #[test]
    fn a_model_without_reasoning_writes_only_its_answer() {
        let (_dir, store, reply) = started_reply();
        let format = ReplyFormat::detect(Some("{{ messages }}"));
        let events = [Event::Text("a <think> b".into()), Event::Error(confab_engine::EngineError::EngineStopped)];
        let outcome = read(&store, "tiny", format, events, vec![], reply, &|_| {});
        let saved = finish(&store, reply, outcome);
        assert_eq!((saved.status, saved.reasoning, saved.content.as_str()), (MessageStatus::Error, None, "a <think> b"));
    }

    /// The tiny Qwen3 with `THINKING_TEMPLATE` in place of its own.
    fn tiny_thinker(engine: &Engine, dir: &std::path::Path) -> Current {
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny/qwen3");
        let model = dir.join("model");
        std::fs::create_dir_all(&model).unwrap();
        for entry in std::fs::read_dir(&fixture).unwrap() {
            let entry = entry.unwrap();
            std::fs::copy(entry.path(), model.join(entry.file_name())).unwrap();
        }
        let config_path = model.join("tokenizer_config.json");
        let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
        config["chat_template"] = THINKING_TEMPLATE.into();
        std::fs::write(&config_path, config.to_string()).unwrap();
        Current::load_for_test(engine, &model)
    }

    #[test]
    fn the_chat_s_thinking_switch_reaches_the_template_and_its_reasoning_is_read() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let folder = tempfile::tempdir().unwrap();
        let model = tiny_thinker(&engine, folder.path());
        assert!(model.info.thinking_switch, "the template has `enable_thinking`");
        let settings = Settings { max_tokens: 6, temperature: Some(0.0), ..Settings::default() };
        let mut earlier = ChatMessage::new("assistant", "4");
        earlier.reasoning_content = Some("2 and 2".into());
        let prompt = Prompt::Chat(vec![ChatMessage::user("2+2?"), earlier, ChatMessage::user("Why?")]);

        let thinking = local_reply_of(&engine, &model, request(&model, prompt.clone(), &settings, true, offered(vec![])).unwrap());
        assert!(thinking.reasoning.is_some_and(|r| !r.is_empty()), "the generation prompt opened <think>: the reply reasons");
        let off = request(&model, prompt, &settings, false, offered(vec![])).unwrap();
        assert_eq!(off.chat.switches.get("enable_thinking"), Some(&serde_json::Value::Bool(false)));
        let answered = local_reply_of(&engine, &model, off);
        assert_eq!(answered.reasoning, None, "thinking off: the template closed the block");
        assert!(!answered.content.is_empty());
    }

    fn local_reply_of(engine: &Engine, model: &Current, request: Request) -> confab_store::Message {
        let (_dir, store, reply) = started_reply();
        let outcome = generate(&store, model, engine.generate(request), vec![], reply, false, &|_| {});
        assert_eq!(outcome.end, ReplyEnd::Complete);
        finish(&store, reply, outcome)
    }

    #[test]
    fn a_reply_with_the_draft_model_keeps_what_speculative_decoding_did() {
        // Tiny SmolLM3 shares tiny Llama's vocabulary: it drafts for it.
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny");
        let mut model = Current::load_for_test(&engine, &fixtures.join("llama"));
        let (draft, _) = engine.load_draft(model.id, fixtures.join("smollm3"), Default::default(), |_| {}).unwrap();
        model.draft = Some(draft);
        let settings =
            Settings { max_tokens: 12, temperature: Some(0.0), speculative: SpeculativeChoice::DraftModel, ..Settings::default() };
        let prompt = Prompt::Chat(vec![ChatMessage::user("one two three one two three")]);
        let saved = local_reply_of(&engine, &model, request(&model, prompt.clone(), &settings, false, offered(vec![])).unwrap());
        let speculative = saved.stats.and_then(|s| s.speculative).expect("the reply's stats say what speculative decoding did");
        assert_eq!(speculative.method, "draft_model");
        assert!(speculative.proposed > 0 && speculative.accepted <= speculative.proposed, "{speculative:?}");
        assert!(speculative.tokens_per_step >= 1.0);
        // Off: plain decoding, and nothing to say.
        let plain = Settings { speculative: SpeculativeChoice::Off, ..settings };
        let saved = local_reply_of(&engine, &model, request(&model, prompt, &plain, false, offered(vec![])).unwrap());
        assert_eq!(saved.stats.and_then(|s| s.speculative), None);
    }

    #[test]
    fn the_settings_reasoning_effort_reaches_a_template_that_reads_it() {
        // The tiny llama wearing gpt-oss's harmony template, which writes "Reasoning: medium"
        // unless `reasoning_effort` says otherwise.
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let folder = tempfile::tempdir().unwrap();
        let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures");
        for entry in std::fs::read_dir(fixtures.join("tiny/llama")).unwrap().flatten() {
            std::fs::copy(entry.path(), folder.path().join(entry.file_name())).unwrap();
        }
        std::fs::copy(fixtures.join("tiny/gpt_oss_harmony/chat_template.jinja"), folder.path().join("chat_template.jinja")).unwrap();
        let model = Current::load_for_test(&engine, folder.path());
        assert!(model.info.reasoning_effort, "the harmony template reads `reasoning_effort`");
        let ids = |effort: Option<ReasoningEffort>| {
            let settings = Settings { reasoning_effort: effort, ..Settings::default() };
            let request = request(&model, Prompt::Chat(vec![ChatMessage::user("hi")]), &settings, true, offered(vec![])).unwrap();
            assert_eq!(request.chat.switches.get("reasoning_effort").and_then(|v| v.as_str()), effort.map(ReasoningEffort::as_str));
            engine.tokenize_chat(model.id, request.prompt, request.chat).unwrap()
        };
        let (own, medium) = (ids(None), ids(Some(ReasoningEffort::Medium)));
        assert_eq!(own, medium, "the template's own default is medium");
        assert_ne!(ids(Some(ReasoningEffort::High)), medium);
        assert_ne!(ids(Some(ReasoningEffort::Low)), medium);
    }

    #[test]
    fn a_model_without_the_switch_gets_no_switch() {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/reference/fixtures/tiny/llama");
        let model = Current::load_for_test(&engine, &fixture);
        assert!(!model.info.thinking_switch);
        let request = request(&model, Prompt::Chat(vec![ChatMessage::user("hi")]), &Settings::default(), false, offered(vec![])).unwrap();
        assert!(request.chat.switches.is_empty() && !request.reply_markup);
    }
}
