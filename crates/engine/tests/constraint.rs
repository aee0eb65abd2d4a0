//! Constrained decoding: the token environment over our vocabularies (byte-level BPE from
//! tokenizer.json and GGUF, SentencePiece GGUF), the masks it gives, and generation under a
//! grammar on the default model (SmolLM2): a grammar that admits exactly the free greedy reply
//! changes none of its tokens, JSON under a schema parses and validates, rows with and without
//! constraints share a batch.

use std::path::PathBuf;

use confab_engine::constraint::{Constraint, Grammars};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Plan, Prompt, Request, StopReason, Usage};
use confab_engine::sample::SamplingParams;
use confab_engine::{ChatMessage, EngineError, Tokenizer};
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::io::GgufFile;
use serde_json::json;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures");

fn smollm2_path() -> PathBuf {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path
}

fn gguf_tokenizer(path: &std::path::Path) -> Tokenizer {
    let gguf = GgufFile::load(path).unwrap();
    Tokenizer::from_gguf(&gguf, path).unwrap()
}

/// Every vocabulary kind we read: (name, tokenizer).
fn vocabularies() -> Vec<(&'static str, Tokenizer)> {
    let tiny = |name: &str| Tokenizer::from_hf_folder(format!("{FIXTURES}/tiny/{name}")).unwrap();
    vec![
        ("tiny qwen3 (tokenizer.json)", tiny("qwen3")),
        ("tiny llama (tokenizer.json)", tiny("llama")),
        ("SmolLM2 (GGUF, byte-level BPE)", gguf_tokenizer(&smollm2_path())),
        ("tiny SentencePiece (GGUF, byte fallback)", gguf_tokenizer(&PathBuf::from(format!("{FIXTURES}/tiny_spm.gguf")))),
    ]
}

fn grammars(tokenizer: &Tokenizer) -> Grammars {
    let eos = tokenizer.eos_id().expect("an EOS id");
    Grammars::new(tokenizer, tokenizer.vocab_size(), &[eos]).unwrap()
}

#[test]
fn digit_masks_allow_digits_only_then_eos() {
    for (name, tokenizer) in vocabularies() {
        let grammars = grammars(&tokenizer);
        let mut guide = grammars.guide(&Constraint::Regex("[0-9]{1,6}".into())).unwrap();
        let mask = guide.mask().unwrap();
        let allowed = mask.allowed();
        assert!(!allowed.is_empty(), "{name}");
        for &id in &allowed {
            let text = tokenizer.decode(&[id], false).unwrap();
            assert!(!text.is_empty() && text.trim_start().chars().all(|c| c.is_ascii_digit()), "{name}: token {id} {text:?} is allowed");
            assert!(!tokenizer.is_special(id), "{name}: special token {id} allowed");
        }
        let eos = tokenizer.eos_id().unwrap();
        assert!(!mask.allows(eos), "{name}: nothing typed yet, so the reply cannot end");
        let digit = *allowed.iter().find(|&&id| tokenizer.decode(&[id], false).unwrap() == "7").unwrap_or(&allowed[0]);
        guide.consume(digit).unwrap();
        let after = guide.mask().unwrap();
        assert!(after.allows(eos), "{name}: after a digit the reply may end");
        assert!(!guide.finished(), "{name}");
    }
}

#[test]
fn forced_tokens_are_the_tokenizers_own() {
    for (name, tokenizer) in vocabularies() {
        let grammars = grammars(&tokenizer);
        let text = "hello world";
        let mut guide = grammars.guide(&Constraint::Regex(regex_literal(text))).unwrap();
        let forced = guide.forced();
        // A continuation of the reply, so no SentencePiece space prefix; llguidance may keep the
        // last token back (a longer token could still follow it).
        assert!(!forced.is_empty(), "{name}: a literal is forced");
        let decoded = tokenizer.decode(&forced, false).unwrap();
        assert!(text.starts_with(decoded.as_str()) && !decoded.is_empty(), "{name}: forced {forced:?} = {decoded:?}");
        for &token in &forced {
            guide.consume(token).unwrap();
        }
        let rest = guide.forced();
        for &token in &rest {
            guide.consume(token).unwrap();
        }
        let mut all = forced.clone();
        all.extend(&rest);
        if tokenizer.decode(&all, false).unwrap() != text {
            // The remaining token is sampled from a mask that allows exactly it.
            let mask = guide.mask().unwrap();
            assert_eq!(mask.count(), 1, "{name}");
            all.push(mask.allowed()[0]);
            guide.consume(mask.allowed()[0]).unwrap();
        }
        assert_eq!(tokenizer.decode(&all, false).unwrap(), text, "{name}");
        assert!(guide.finished(), "{name}: the literal is complete");
    }
}

#[test]
fn masks_under_a_json_schema_start_with_an_object() {
    let tokenizer = gguf_tokenizer(&smollm2_path());
    let grammars = grammars(&tokenizer);
    let schema = json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"], "additionalProperties": false});
    let mut guide = grammars.guide(&Constraint::JsonSchema(schema)).unwrap();
    // Compact JSON: `{"n":` is forced whole.
    let forced = guide.forced();
    let text = tokenizer.decode(&forced, false).unwrap();
    assert!(r#"{"n":"#.starts_with(&text) && !text.is_empty(), "forced {text:?}");
}

#[test]
fn schemas_llguidance_cannot_express_are_refused_by_name() {
    let tokenizer = Tokenizer::from_hf_folder(format!("{FIXTURES}/tiny/qwen3")).unwrap();
    let grammars = grammars(&tokenizer);
    let schema = json!({"type": "array", "items": {"type": "integer"}, "uniqueItems": true});
    let error = grammars.guide(&Constraint::JsonSchema(schema)).unwrap_err();
    assert!(matches!(error, EngineError::InvalidSetting { name: "constraint", .. }), "{error:?}");
    assert!(error.to_string().contains("uniqueItems"), "{error}");

    let error = grammars.guide(&Constraint::Regex("(unclosed".into())).unwrap_err();
    assert!(error.to_string().contains("regular expression"), "{error}");
    let error = grammars.guide(&Constraint::Lark("start: undefined_rule".into())).unwrap_err();
    assert!(error.to_string().contains("Lark grammar"), "{error}");
}

// --- Generation on the default model -----------------------------------------------------

fn start() -> (Engine, ModelId) {
    let mut options = EngineOptions::default();
    options.prefix.enabled = false;
    let engine = Engine::start(options).unwrap();
    let (id, _) = engine.load(smollm2_path(), LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

fn request(model: ModelId, ask: &str, max_tokens: u32, constraint: Option<Constraint>) -> Request {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = max_tokens;
    let mut request = Request::new(model, Prompt::Chat(vec![ChatMessage::user(ask)]), sampling);
    request.constraint = constraint;
    request
}

struct Reply {
    plan: Plan,
    tokens: Vec<u32>,
    text: String,
    reason: StopReason,
    usage: Usage,
}

fn collect(events: impl Iterator<Item = Event>) -> Reply {
    let (mut plan, mut tokens, mut text, mut done) = (None, vec![], String::new(), None);
    for event in events {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, text: piece } => {
                tokens.push(id);
                text.push_str(&piece);
            }
            Event::Text(piece) => text.push_str(&piece),
            Event::Canvas(_) | Event::Queued { .. } => {}
            Event::Done { reason, usage, .. } => done = Some((reason, usage)),
            Event::Error(e) => panic!("{e}"),
        }
    }
    let (reason, usage) = done.expect("a Done event");
    Reply { plan: plan.expect("a plan"), tokens, text, reason, usage }
}

/// `text` as a regular expression that matches it alone.
fn regex_literal(text: &str) -> String {
    text.chars().fold(String::new(), |mut out, c| {
        if "\\.+*?()|[]{}^$#&-~".contains(c) {
            out.push('\\');
        }
        out.push(c);
        out
    })
}

#[test]
fn a_grammar_of_the_greedy_reply_changes_no_token() {
    let (engine, model) = start();
    let ask = "Write one sentence about the sea.";
    let free = collect(engine.generate(request(model, ask, 24, None)));
    assert!(free.tokens.len() > 4, "{:?}", free.text);
    assert_eq!(free.plan.constraint, None);

    // Sampled token by token under the grammar's masks: the same tokens.
    let mut sampled = request(model, ask, 24, Some(Constraint::Regex(regex_literal(&free.text))));
    sampled.grammar_jump = false;
    let sampled = collect(engine.generate(sampled));
    assert_eq!(sampled.tokens, free.tokens, "{:?} vs {:?}", sampled.text, free.text);
    assert_eq!(sampled.usage.forced, 0);
    assert_eq!(sampled.plan.constraint, Some("regex"));
    assert!(!sampled.plan.grammar_jump);
    assert!(sampled.plan.grammar_jump_declined.is_some());

    // With grammar jump the literal is forced after its first token: the same text, in the
    // tokenizer's own tokens, almost without sampling.
    // More room than the reply needs, so that it ends where the grammar does.
    let jumped = collect(engine.generate(request(model, ask, 48, Some(Constraint::Regex(regex_literal(&free.text))))));
    assert!(jumped.plan.grammar_jump);
    assert_eq!(jumped.text, free.text);
    assert!(jumped.usage.forced + 2 >= jumped.usage.generated, "{} forced of {}", jumped.usage.forced, jumped.usage.generated);
    assert_eq!(jumped.usage.passes_saved, jumped.usage.forced, "alone, every forced token rides a pass it shares");
    assert_eq!(jumped.reason, StopReason::Eos, "the grammar is complete");
}

#[test]
fn json_under_a_schema_parses_and_validates() {
    let (engine, model) = start();
    let schema = json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 16},
            "age": {"type": "integer", "minimum": 0, "maximum": 120},
            "pets": {"type": "array", "items": {"enum": ["cat", "dog", "fish"]}, "minItems": 1, "maxItems": 3}
        },
        "required": ["name", "age", "pets"],
        "additionalProperties": false
    });
    let reply = collect(engine.generate(request(model, "Describe a person as JSON.", 80, Some(Constraint::JsonSchema(schema.clone())))));
    assert_eq!(reply.reason, StopReason::Eos, "{:?}", reply.text);
    let value: serde_json::Value = serde_json::from_str(&reply.text).unwrap_or_else(|e| panic!("{e}: {:?}", reply.text));
    let object = value.as_object().unwrap();
    assert_eq!(object.keys().collect::<Vec<_>>(), ["name", "age", "pets"]);
    assert!(object["name"].as_str().unwrap().chars().count() <= 16);
    assert!((0..=120).contains(&object["age"].as_i64().unwrap()));
    let pets = object["pets"].as_array().unwrap();
    assert!((1..=3).contains(&pets.len()));
    assert!(pets.iter().all(|p| ["cat", "dog", "fish"].contains(&p.as_str().unwrap())));
    assert_eq!(reply.plan.constraint, Some("json_schema"));
    assert!(reply.usage.forced > 0, "keys and punctuation are forced");
}

#[test]
fn constrained_and_free_rows_share_a_batch() {
    let (engine, model) = start();
    let free_alone = collect(engine.generate(request(model, "Name three colours.", 16, None)));
    let generations = [
        engine.generate(request(model, "Give a number as JSON.", 24, Some(Constraint::JsonObject))),
        engine.generate(request(model, "Name three colours.", 16, None)),
        engine.generate(request(model, "Pick yes or no.", 8, Some(Constraint::Regex("(yes|no)".into())))),
    ];
    let [json_row, free_row, choice] = generations.map(collect);
    assert_eq!(free_row.tokens, free_alone.tokens, "a free row is not changed by constrained neighbours");
    // Cut short by max_tokens, or a whole object.
    if json_row.reason != StopReason::MaxTokens {
        let object: serde_json::Value = serde_json::from_str(&json_row.text).unwrap_or_else(|e| panic!("{e}: {:?}", json_row.text));
        assert!(object.is_object(), "{:?}", json_row.text);
    }
    assert!(json_row.text.starts_with('{'), "{:?}", json_row.text);
    assert!(["yes", "no"].contains(&choice.text.as_str()), "{:?}", choice.text);
    assert_eq!(choice.reason, StopReason::Eos);
}

#[test]
fn an_unusable_schema_fails_before_any_work() {
    let (engine, model) = start();
    let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "dependentRequired": {"a": ["b"]}});
    let events = engine.generate(request(model, "Hi", 8, Some(Constraint::JsonSchema(schema))));
    match events.next() {
        Some(Event::Error(e)) => assert!(e.to_string().contains("dependentRequired"), "{e}"),
        other => panic!("expected an error first, got {other:?}"),
    }
}
