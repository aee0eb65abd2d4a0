//! What the fidelity tests share: reading the reference fixtures that tests/reference/ scripts
//! write, and the greedy run they are compared with.
#![allow(dead_code)] // each test file uses its own part

use std::path::{Path, PathBuf};

use confab_engine::model::LoadOptions;
use confab_engine::npy;
use confab_engine::runtime::{Engine, EngineOptions, Event, Generation, ModelId, Plan, Prompt, Request, StopReason, Usage};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use serde_json::Value;

#[path = "../../../media/tests/common/crafted.rs"]
pub mod crafted;

pub fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

pub fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

pub fn ids(v: &Value) -> Vec<u32> {
    v.as_array().unwrap().iter().map(|x| x.as_u64().unwrap() as u32).collect()
}

pub fn floats(v: &Value) -> Vec<f32> {
    v.as_array().unwrap().iter().map(|x| x.as_f64().unwrap() as f32).collect()
}

pub fn max_diff(got: &[f32], want: &[f32]) -> f32 {
    assert_eq!(got.len(), want.len(), "lengths differ");
    got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max)
}

/// What a greedy run of a reference's prompt gave.
pub struct GreedyRun {
    pub ids: Vec<u32>,
    pub first_logits: Vec<f32>,
}

/// Generates `reference["steps"]` greedy tokens from `reference["prompt_ids"]` (through EOS),
/// prefilled in chunks of 16 so that several chunks (and sliding windows) are crossed.
pub fn greedy_run(engine: &Engine, model: ModelId, reference: &Value, tag: &str) -> GreedyRun {
    let logits_file = std::env::temp_dir().join(format!("confab-fidelity-{tag}-{}.npy", std::process::id()));
    let sampling = SamplingParams { max_tokens: reference["steps"].as_u64().unwrap() as u32, ..SamplingParams::greedy() };
    let mut request = Request::new(model, Prompt::Tokens(ids(&reference["prompt_ids"])), sampling);
    request.ignore_eos = true;
    request.logits_path = Some(logits_file.clone());
    request.chunk_size = 16;
    let mut got = vec![];
    for event in engine.generate(request) {
        match event {
            Event::Token { id, .. } => got.push(id),
            Event::Error(e) => panic!("{tag}: {e}"),
            _ => {}
        }
    }
    let first_logits = npy::read_f32(&logits_file).unwrap();
    std::fs::remove_file(&logits_file).ok();
    GreedyRun { ids: got, first_logits }
}

/// Logits within `tolerance` of the reference's first step, and its greedy ids exactly.
pub fn assert_matches(run: &GreedyRun, reference: &Value, tolerance: f32, tag: &str) {
    let diff = max_diff(&run.first_logits, &floats(&reference["first_logits"]));
    eprintln!("{tag}: first-step logits max abs diff {diff:e}");
    assert!(diff < tolerance, "{tag}: first-step logits differ by up to {diff}");
    assert_eq!(run.ids, ids(&reference["greedy_ids"]), "{tag}: greedy ids");
}

/// The whole check of a tiny fixture's reference.json: vocabulary size, first-step logits
/// within `tolerance`, greedy ids, and the chat template's ids.
pub fn check_fixture(name: &str, tolerance: f32) {
    let dir = fixture(name);
    let reference = json(&dir.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.vocab_size, reference["first_logits"].as_array().unwrap().len(), "{name}: vocab");
    assert_matches(&greedy_run(&engine, model, &reference, name), &reference, tolerance, name);

    let chat = &reference["chat"];
    let messages: Vec<ChatMessage> = serde_json::from_value(chat["messages"].clone()).unwrap();
    assert_eq!(engine.tokenize(model, Prompt::Chat(messages)).unwrap(), ids(&chat["ids"]), "{name}: chat template ids");
}

/// What a request's events said: its plan, the tokens and text it wrote, and how it ended.
pub struct Reply {
    pub plan: Plan,
    pub ids: Vec<u32>,
    pub text: String,
    pub reason: StopReason,
    pub usage: Usage,
}

/// Runs `request` to its end; an error event fails the test.
pub fn reply(engine: &Engine, request: Request) -> Reply {
    let (mut plan, mut ids, mut text, mut done) = (None, vec![], String::new(), None);
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, text: t } => {
                ids.push(id);
                text.push_str(&t);
            }
            Event::Text(t) => text.push_str(&t),
            Event::Canvas(_) | Event::Queued { .. } => {}
            Event::Done { reason, usage, .. } => done = Some((reason, usage)),
            Event::Error(e) => panic!("{e}"),
        }
    }
    let (reason, usage) = done.expect("a Done event");
    Reply { plan: plan.expect("a plan comes first"), ids, text, reason, usage }
}

/// A scratch copy of a fixture folder to break.
pub fn copy_of_fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(fixture(name)).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

/// What loading `path` fails with, on a fresh engine.
pub fn load_error(path: &Path) -> confab_engine::EngineError {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    engine.load(path, LoadOptions::default(), |_| {}).expect_err("loading should fail")
}

/// Waits for `n` tokens of `generation`, keeping its events.
pub fn take_tokens(generation: &Generation, n: usize, into: &mut Vec<Event>) {
    let mut seen = 0;
    while seen < n {
        let event = generation.next().expect("the generation is still running");
        seen += matches!(event, Event::Token { .. }) as usize;
        into.push(event);
    }
}
