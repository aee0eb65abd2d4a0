//! The prefix cache through the engine API: continuing a conversation computes only the new
//! tokens, an edit reuses up to the edit, a restarted engine restores from disk, damaged
//! entries are ignored, and reuse never changes the output.

use std::path::{Path, PathBuf};

use confab_engine::cache::PrefixOptions;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Plan, Prompt, Request, Usage};
use confab_engine::sample::SamplingParams;

fn tiny(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn engine(cache_dir: Option<&Path>, model: &str) -> (Engine, ModelId) {
    let prefix = PrefixOptions { dir: cache_dir.map(Path::to_path_buf), ..Default::default() };
    let engine = Engine::start(EngineOptions { prefix, ..Default::default() }).unwrap();
    let (id, _) = engine.load(tiny(model), LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

struct Outcome {
    plan: Plan,
    tokens: Vec<u32>,
    usage: Usage,
}

fn run(engine: &Engine, model: ModelId, prompt: &[u32], max_tokens: u32, reuse: bool) -> Outcome {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = max_tokens;
    let mut request = Request::new(model, Prompt::Tokens(prompt.to_vec()), sampling);
    request.ignore_eos = true;
    request.reuse_prefix = reuse;
    let (mut plan, mut tokens, mut usage) = (None, vec![], None);
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, .. } => tokens.push(id),
            Event::Done { usage: u, .. } => usage = Some(u),
            Event::Error(e) => panic!("{e}"),
            Event::Text(_) | Event::Canvas(_) | Event::Queued { .. } => {}
        }
    }
    Outcome { plan: plan.unwrap(), tokens, usage: usage.unwrap() }
}

/// A first turn (its prompt and reply) and a second turn's prompt continuing it.
fn conversation(engine: &Engine, model: ModelId) -> (Vec<u32>, Vec<u32>) {
    let first: Vec<u32> = (3..60).collect();
    let reply = run(engine, model, &first, 6, true).tokens;
    let mut second = first.clone();
    second.extend(&reply);
    second.extend(100..120);
    (first, second)
}

#[test]
fn continuing_a_conversation_prefills_only_the_new_tokens() {
    let (engine, model) = engine(None, "llama");
    let (first, second) = conversation(&engine, model);
    let next = run(&engine, model, &second, 6, true);
    let history = first.len() + 6; // the first prompt and its reply are cached
    assert_eq!(next.plan.reuse_source, "memory");
    assert_eq!(next.plan.reused_tokens, history);
    assert_eq!(next.usage.cached, history);
    assert_eq!(next.usage.prompt - next.usage.cached, 20, "only the new turn is computed");
}

/// A request that continues a whole entry takes it out of the cache (to extend its keys and
/// values in place); its own state goes back when it ends, and the entry it extended in place
/// gives the same tokens as computing everything.
#[test]
fn a_continued_conversation_is_back_in_the_cache_when_the_request_ends() {
    let (engine, model) = engine(None, "llama");
    let (first, second) = conversation(&engine, model);
    let continued = run(&engine, model, &second, 6, true);
    assert_eq!(continued.plan.reused_tokens, first.len() + 6);
    let again = run(&engine, model, &second, 6, true); // a regenerate: all but the last prompt token
    assert_eq!(again.plan.reuse_source, "memory");
    assert_eq!(again.plan.reused_tokens, second.len() - 1);
    let cold = run(&engine, model, &second, 6, false);
    assert_eq!(continued.tokens, cold.tokens);
    assert_eq!(again.tokens, cold.tokens);
    // The first turn alone, diverging inside the extended entry: cut back, and still exact.
    let mut edited = first.clone();
    edited.extend([200, 201, 202]);
    let edit = run(&engine, model, &edited, 6, true);
    assert_eq!(edit.plan.reused_tokens, first.len());
    assert_eq!(edit.tokens, run(&engine, model, &edited, 6, false).tokens);
}

#[test]
fn an_edit_in_the_middle_reuses_up_to_the_edit() {
    let (engine, model) = engine(None, "llama");
    let (_, second) = conversation(&engine, model);
    run(&engine, model, &second, 4, true);
    let mut edited = second[..30].to_vec();
    edited.extend([200, 201, 202]);
    let out = run(&engine, model, &edited, 4, true);
    assert_eq!(out.plan.reused_tokens, 30);
}

#[test]
fn reuse_gives_the_same_tokens_as_computing_everything() {
    let (engine, model) = engine(None, "gemma3"); // sliding-window layers too
    let (_, second) = conversation(&engine, model);
    let reused = run(&engine, model, &second, 12, true);
    assert!(reused.plan.reused_tokens > 0);
    let cold = run(&engine, model, &second, 12, false);
    assert_eq!(cold.plan.reused_tokens, 0);
    assert_eq!(cold.plan.reuse_source, "none");
    assert_eq!(reused.tokens, cold.tokens);
}

#[test]
fn a_new_engine_restores_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let (first, second) = {
        let (engine, model) = engine(Some(dir.path()), "llama");
        conversation(&engine, model)
    }; // dropped: a clean shutdown writes the sessions to disk
    assert!(std::fs::read_dir(dir.path()).unwrap().count() >= 2, "a manifest and its data");

    let (engine, model) = engine(Some(dir.path()), "llama");
    let out = run(&engine, model, &second, 6, true);
    assert_eq!(out.plan.reuse_source, "disk");
    assert_eq!(out.plan.reused_tokens, first.len() + 6);
    let cold = run(&engine, model, &second, 6, false);
    assert_eq!(out.tokens, cold.tokens);
}

#[test]
fn a_shut_down_engine_has_written_its_sessions_though_it_is_still_held() {
    // An app's exit ends the process without dropping the engine; it shuts it down instead.
    let dir = tempfile::tempdir().unwrap();
    let (engine, model) = engine(Some(dir.path()), "llama");
    let (first, second) = conversation(&engine, model);
    assert!(engine.shutdown(std::time::Duration::from_secs(60)), "shut down in time");
    assert!(std::fs::read_dir(dir.path()).unwrap().count() >= 2, "a manifest and its data");
    // Whatever comes after is refused, not lost without a word.
    let late = engine.generate(Request::new(model, Prompt::Tokens(second.clone()), SamplingParams::greedy()));
    assert!(matches!(late.into_iter().next(), Some(Event::Error(_))));

    let (restarted, model) = self::engine(Some(dir.path()), "llama");
    let out = run(&restarted, model, &second, 6, true);
    assert_eq!(out.plan.reuse_source, "disk");
    assert_eq!(out.plan.reused_tokens, first.len() + 6);
    drop(engine);
}

fn files_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).filter(|p| p.to_string_lossy().ends_with(suffix)).collect()
}

#[test]
fn damaged_and_foreign_entries_are_ignored_and_removed() {
    for damage in ["corrupt", "truncated", "garbage manifest"] {
        let dir = tempfile::tempdir().unwrap();
        let second = {
            let (engine, model) = engine(Some(dir.path()), "llama");
            conversation(&engine, model).1
        };
        let data = files_with(dir.path(), ".safetensors").remove(0);
        match damage {
            "corrupt" => {
                let mut bytes = std::fs::read(&data).unwrap();
                let n = bytes.len();
                bytes[n - 100..].iter_mut().for_each(|b| *b ^= 0x5a);
                std::fs::write(&data, bytes).unwrap();
            }
            "truncated" => {
                let len = std::fs::metadata(&data).unwrap().len();
                std::fs::OpenOptions::new().write(true).open(&data).unwrap().set_len(len / 2).unwrap();
            }
            _ => std::fs::write(files_with(dir.path(), ".json").remove(0), b"{not json").unwrap(),
        }
        let (engine, model) = engine(Some(dir.path()), "llama");
        let out = run(&engine, model, &second, 6, true);
        assert_eq!(out.plan.reused_tokens, 0, "{damage}");
        assert_eq!(out.tokens, run(&engine, model, &second, 6, false).tokens, "{damage}");
        drop(engine);
        let leftover: Vec<_> = files_with(dir.path(), ".json");
        assert!(
            leftover
                .iter()
                .all(|p| std::fs::read_to_string(p).unwrap().starts_with('{') && !std::fs::read_to_string(p).unwrap().starts_with("{not")),
            "{damage}: the bad entry is gone"
        );
    }

    // Another model's entries never match.
    let dir = tempfile::tempdir().unwrap();
    let second = {
        let (engine, model) = engine(Some(dir.path()), "llama");
        conversation(&engine, model).1
    };
    let (engine, model) = engine(Some(dir.path()), "llama_v4"); // same weights, other config file
    let out = run(&engine, model, &second[..40], 2, true);
    assert_eq!(out.plan.reused_tokens, 0);
}

#[test]
fn the_off_switch() {
    let prefix = PrefixOptions { enabled: false, ..Default::default() };
    let engine = Engine::start(EngineOptions { prefix, ..Default::default() }).unwrap();
    let (model, _) = engine.load(tiny("llama"), LoadOptions::default(), |_| {}).unwrap();
    let (_, second) = conversation(&engine, model);
    let out = run(&engine, model, &second, 2, true);
    assert_eq!(out.plan.reused_tokens, 0);
    assert_eq!(out.plan.reuse_declined.as_deref(), Some("the prefix cache is off"));
}
