//! Per-layer state kinds through the engine API. Layers that cannot be cut back to a shorter
//! prefix (Gemma 3's rotating sliding windows; Qwen 3.5's recurrent linear attention; LFM2's
//! convolution windows) resume
//! from checkpoints taken at chunk and message boundaries: after a continued turn, an edit,
//! a regenerate and a restart (the disk tier), the tokens are identical to computing cold,
//! and the plan says which checkpoint served. Sliding layers hold window-sized state however
//! long the prompt.

use std::path::{Path, PathBuf};

use confab_engine::cache::PrefixOptions;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Plan, Prompt, Request, Usage};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;

fn tiny(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn start(model: &Path, cache_dir: Option<&Path>) -> (Engine, ModelId) {
    let prefix = PrefixOptions { dir: cache_dir.map(Path::to_path_buf), ..Default::default() };
    let engine = Engine::start(EngineOptions { prefix, ..Default::default() }).unwrap();
    let (id, _) = engine.load(model, LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

struct Outcome {
    plan: Plan,
    tokens: Vec<u32>,
    text: String,
    usage: Usage,
}

fn run(engine: &Engine, model: ModelId, prompt: Prompt, reuse: bool, chunk: usize) -> Outcome {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 8;
    let mut request = Request::new(model, prompt, sampling);
    request.ignore_eos = true;
    request.reuse_prefix = reuse;
    request.chunk_size = chunk;
    let (mut plan, mut tokens, mut text, mut usage) = (None, vec![], String::new(), None);
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, text: t } => {
                tokens.push(id);
                text += &t;
            }
            Event::Text(t) => text += &t,
            Event::Canvas(_) | Event::Queued { .. } => {}
            Event::Done { usage: u, .. } => usage = Some(u),
            Event::Error(e) => panic!("{e}"),
        }
    }
    Outcome { plan: plan.unwrap(), tokens, text, usage: usage.unwrap() }
}

fn chat(turns: &[(&str, &str)]) -> Prompt {
    Prompt::Chat(turns.iter().map(|(role, text)| ChatMessage::new(*role, *text)).collect())
}

/// The request with reuse, checked against the same request computed cold.
fn same_as_cold(engine: &Engine, model: ModelId, prompt: Prompt, tag: &str) -> Outcome {
    let cold = run(engine, model, prompt.clone(), false, 16);
    let warm = run(engine, model, prompt, true, 16);
    assert_eq!(warm.tokens, cold.tokens, "{tag}: resumed tokens differ from cold");
    warm
}

/// A continued turn, an edit of the second user message, a regenerate, then the same edit in a
/// restarted engine: each identical to cold, each resuming as far as its state allows (a
/// regenerate recomputes fewer than `header_limit` tokens: the reply's header, as the fixture's
/// tokenizer spells it).
fn resumes_like_cold(fixture: &str, header_limit: usize) {
    let dir = tempfile::tempdir().unwrap();
    let (engine, model) = start(&tiny(fixture), Some(dir.path()));
    let system = ("system", "You are a terse assistant who answers in one short sentence.");
    let first = run(&engine, model, chat(&[system, ("user", "What is the capital of France and why?")]), true, 16);
    let history = [system, ("user", "What is the capital of France and why?"), ("assistant", first.text.as_str())];

    let mut turn = history.to_vec();
    turn.push(("user", "And the capital of Italy?"));
    let continued = same_as_cold(&engine, model, chat(&turn), "continued turn");
    assert!(continued.plan.reused_tokens > 0, "a continued turn reuses the first: {:?}", continued.plan);
    assert!(continued.usage.cached > 0);

    let mut edited = history.to_vec();
    edited.push(("user", "And the capital of Spain?"));
    let edit = same_as_cold(&engine, model, chat(&edited), "edit");
    let resumed = edit.plan.resumed_from_checkpoint.clone().unwrap_or_else(|| panic!("an edit resumes from a checkpoint: {:?}", edit.plan));
    assert!(resumed.position <= resumed.shared && resumed.position > 0, "{resumed:?}");
    assert_eq!(edit.plan.reused_tokens, resumed.position);

    let again = same_as_cold(&engine, model, chat(&edited), "regenerate");
    assert!(again.plan.resumed_from_checkpoint.is_some(), "a regenerate resumes from the checkpoint before the reply: {:?}", again.plan);
    assert!(
        edit.plan.prompt_tokens - again.plan.reused_tokens < header_limit,
        "a regenerate recomputes only the reply's header: {:?}",
        again.plan
    );
    drop(engine);

    let (engine, model) = start(&tiny(fixture), Some(dir.path()));
    let mut other = history.to_vec();
    other.push(("user", "And the capital of Portugal?"));
    let restarted = run(&engine, model, chat(&other), true, 16);
    assert_eq!(restarted.plan.reuse_source, "disk", "{:?}", restarted.plan);
    assert!(restarted.plan.resumed_from_checkpoint.is_some(), "{:?}", restarted.plan);
    let cold = run(&engine, model, chat(&other), false, 16);
    assert_eq!(restarted.tokens, cold.tokens, "after a restart: resumed tokens differ from cold");
}

#[test]
fn gemma3_sliding_windows_resume_from_checkpoints() {
    resumes_like_cold("gemma3", 8);
}

#[test]
fn full_keys_and_values_need_no_checkpoints() {
    let (engine, model) = start(&tiny("llama"), None);
    let out = run(&engine, model, Prompt::Tokens((3..100).collect()), true, 16);
    assert_eq!(out.plan.checkpoints, 0);
    let bytes = &out.usage.state_bytes;
    assert_eq!(bytes.window + bytes.recurrent + bytes.convolution, 0);
}

/// Gemma 3's sliding layers keep `window - 1` positions whatever the prompt's length; its full
/// layers keep everything.
#[test]
fn gemma3_sliding_layers_hold_window_sized_state() {
    // The tiny checkpoint's context is 256: a copy with a longer one (RoPE needs no table).
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(tiny("gemma3")).unwrap() {
        let path = entry.unwrap().path();
        std::fs::copy(&path, dir.path().join(path.file_name().unwrap())).unwrap();
    }
    let config_path = dir.path().join("config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["max_position_embeddings"] = 8192.into();
    std::fs::write(&config_path, config.to_string()).unwrap();

    let (engine, model) = start(dir.path(), None);
    let bytes_at = |len: u32| {
        let prompt = Prompt::Tokens((0..len).map(|i| 3 + i * 7 % 300).collect());
        run(&engine, model, prompt, false, 512).usage.state_bytes
    };
    let (short, long) = (bytes_at(100), bytes_at(4000));
    // 2 sliding layers × (keys + values) × 2 KV heads × (8 - 1) positions × head_dim 24 × 4 bytes.
    let window = 2 * 2 * 2 * 7 * 24 * 4;
    assert_eq!((short.window, long.window), (window, window), "sliding layers hold their window only");
    assert!(long.keys_values > 30 * short.keys_values / 2, "full layers grow with the prompt: {short:?} {long:?}");
    eprintln!("gemma3 state at 4,000+8 tokens: {long:?}");
}

#[test]
fn qwen3_5_recurrent_state_resumes_from_checkpoints() {
    resumes_like_cold("qwen3_5", 8);
}

/// Qwen 3.5's linear-attention layers hold a fixed-size state however long the prompt; its full
/// layers grow.
#[test]
fn qwen3_5_recurrent_state_is_fixed_size() {
    let (engine, model) = start(&tiny("qwen3_5"), None);
    let bytes_at = |len: u32| run(&engine, model, Prompt::Tokens((0..len).map(|i| 3 + i * 7 % 400).collect()), false, 64).usage.state_bytes;
    let (short, long) = (bytes_at(20), bytes_at(200));
    assert!(short.recurrent > 0 && short.recurrent == long.recurrent, "{short:?} {long:?}");
    assert_eq!(short.window, 0);
    assert!(long.keys_values >= short.keys_values);
}

#[test]
fn lfm2_convolution_windows_resume_from_checkpoints() {
    // The tiny ChatML tokenizer spells `assistant` in 6 tokens: 8 to recompute after `<|im_start|>`.
    resumes_like_cold("lfm2", 9);
}

/// LFM2's convolution layers hold their last `conv_L_cache - 1` inputs however long the prompt;
/// its attention layers grow. A prompt resumed from a checkpoint mid-way gives the cold run's
/// first-step logits bit for bit.
#[test]
fn lfm2_convolution_windows_are_fixed_size_and_resume_exactly() {
    let (engine, model) = start(&tiny("lfm2"), None);
    let prompt = |len: u32| Prompt::Tokens((0..len).map(|i| 3 + i * 7 % 380).collect());
    let (short, long) =
        (run(&engine, model, prompt(20), false, 64).usage.state_bytes, run(&engine, model, prompt(200), false, 64).usage.state_bytes);
    // 4 convolution layers × (3 - 1) inputs × hidden 48 × 4 bytes.
    assert_eq!((short.convolution, long.convolution), (4 * 2 * 48 * 4, 4 * 2 * 48 * 4), "{short:?} {long:?}");
    assert_eq!(short.recurrent + short.window, 0);
    assert!(long.keys_values >= short.keys_values);

    let logits_of = |tokens: Vec<u32>, reuse: bool| -> (Vec<u32>, Vec<f32>, Plan) {
        let file = tempfile::NamedTempFile::new().unwrap().into_temp_path();
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = 16;
        let mut request = Request::new(model, Prompt::Tokens(tokens), sampling);
        request.ignore_eos = true;
        request.reuse_prefix = reuse;
        request.chunk_size = 16;
        request.logits_path = Some(file.to_path_buf());
        let (mut ids, mut plan) = (vec![], None);
        for event in engine.generate(request) {
            match event {
                Event::Token { id, .. } => ids.push(id),
                Event::Plan(p) => plan = Some(p),
                Event::Error(e) => panic!("{e}"),
                _ => {}
            }
        }
        (ids, confab_engine::npy::read_f32(&file).unwrap(), plan.unwrap())
    };
    let first: Vec<u32> = (0..40).map(|i| 3 + (i * 11) % 380).collect();
    logits_of(first.clone(), true);
    // Shares the first 37 tokens: resumes from the checkpoint at 32 (a chunk boundary).
    let edited: Vec<u32> = first[..37].iter().copied().chain([5, 6, 7, 8, 9]).collect();
    let (warm_ids, warm_logits, plan) = logits_of(edited.clone(), true);
    let resumed = plan.resumed_from_checkpoint.clone().unwrap_or_else(|| panic!("no checkpoint served: {plan:?}"));
    assert!(resumed.position > 0 && resumed.position <= 37, "{resumed:?}");
    let (cold_ids, cold_logits, _) = logits_of(edited, false);
    assert_eq!(warm_ids, cold_ids);
    assert_eq!(warm_logits, cold_logits, "resumed first-step logits differ from cold");
}
