//! Paged keys/values (the prefix cache's full keys/values layers in shared pages) against the
//! contiguous buffers the cache kept before, for every family: a first turn, a regenerate, an
//! edit and a continued conversation give bit-identical first-step logits and the same greedy
//! ids either way. Prompts cross several 256-position pages; the tiny fixtures' context is
//! raised (a config value the weights do not depend on) so that they can. On disk, the pages
//! are block files with checksums, shared between conversations: a damaged block is found
//! and discarded with its conversation, never read.

mod common;

use std::path::{Path, PathBuf};

use confab_engine::cache::PrefixOptions;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::state::{KvQuantization, PAGE};

/// The fixture `name` in a temporary folder, its context raised to 2,048 positions.
fn long_context(name: &str, into: &Path) -> PathBuf {
    let from = common::fixture(name);
    let to = into.join(name);
    std::fs::create_dir_all(&to).unwrap();
    for file in std::fs::read_dir(&from).unwrap().flatten().filter(|f| f.path().is_file()) {
        std::fs::copy(file.path(), to.join(file.file_name())).unwrap();
    }
    let mut config = common::json(&to.join("config.json"));
    let text = if config.get("text_config").is_some() { &mut config["text_config"] } else { &mut config };
    text["max_position_embeddings"] = 2048.into();
    std::fs::write(to.join("config.json"), serde_json::to_vec(&config).unwrap()).unwrap();
    to
}

fn start(model: &Path, paged: bool, load: LoadOptions) -> (Engine, ModelId, usize) {
    start_with(model, PrefixOptions { paged, ..Default::default() }, load)
}

fn start_with(model: &Path, prefix: PrefixOptions, load: LoadOptions) -> (Engine, ModelId, usize) {
    let engine = Engine::start(EngineOptions { prefix, ..Default::default() }).unwrap();
    let (id, info) = engine.load(model, load, |_| {}).unwrap();
    (engine, id, info.vocab_size)
}

struct Outcome {
    reused: usize,
    ids: Vec<u32>,
    first_logits: Vec<f32>,
}

fn run(engine: &Engine, model: ModelId, prompt: &[u32], tag: &str) -> Outcome {
    // Tests run in parallel and share tags (the same model at other bits): a file of each run's own.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let logits = std::env::temp_dir().join(format!("confab-paged-{tag}-{}-{run}.npy", std::process::id()));
    let sampling = SamplingParams { max_tokens: 8, ..SamplingParams::greedy() };
    let mut request = Request::new(model, Prompt::Tokens(prompt.to_vec()), sampling);
    request.ignore_eos = true;
    request.chunk_size = 128; // chunk boundaries are where untrimmable layers take checkpoints
    request.logits_path = Some(logits.clone());
    let (mut reused, mut ids) = (None, vec![]);
    for event in engine.generate(request) {
        match event {
            Event::Plan(plan) => reused = Some(plan.reused_tokens),
            Event::Token { id, .. } => ids.push(id),
            Event::Error(e) => panic!("{tag}: {e}"),
            _ => {}
        }
    }
    let first_logits = confab_engine::npy::read_f32(&logits).unwrap();
    std::fs::remove_file(&logits).ok();
    Outcome { reused: reused.unwrap(), ids, first_logits }
}

/// The same conversation on a paged and a contiguous cache: every step bit-identical, and the
/// regenerate and the edit reuse more than a page.
fn paged_matches_contiguous(name: &str) {
    paged_matches_contiguous_with(name, LoadOptions::default());
}

fn paged_matches_contiguous_with(name: &str, load: LoadOptions) {
    let dir = tempfile::tempdir().unwrap();
    let model = long_context(name, dir.path());
    let (paged, paged_id, vocab) = start(&model, true, load.clone());
    let (contiguous, contiguous_id, _) = start(&model, false, load);
    let token = |i: usize| (3 + (i * 7919) % (vocab - 8)) as u32;
    let first: Vec<u32> = (0..2 * PAGE + 100).map(token).collect();
    let edited: Vec<u32> = first[..PAGE + 200].iter().copied().chain((5000..5040).map(token)).collect();
    let mut steps: Vec<(&str, Vec<u32>)> = vec![("first", first.clone()), ("regenerate", first.clone()), ("edit", edited)];
    let mut replies = vec![];
    for (step, prompt) in steps.iter_mut().chain(&mut vec![("continue", vec![])]) {
        if *step == "continue" {
            // The regenerated reply continued by a new message: takes its entry whole.
            *prompt = first.iter().chain(&replies[1]).copied().chain((9000..9030).map(token)).collect();
        }
        let tag = format!("{name}-{step}");
        let a = run(&paged, paged_id, prompt, &format!("{tag}-paged"));
        let b = run(&contiguous, contiguous_id, prompt, &format!("{tag}-contiguous"));
        assert_eq!(a.reused, b.reused, "{tag}: the same reuse");
        if *step != "first" {
            assert!(a.reused > PAGE, "{tag}: reused {} positions, more than a page", a.reused);
        }
        assert_eq!(a.ids, b.ids, "{tag}: greedy ids");
        let differing = a.first_logits.iter().zip(&b.first_logits).filter(|(x, y)| x.to_bits() != y.to_bits()).count();
        assert_eq!((a.first_logits.len(), differing), (b.first_logits.len(), 0), "{tag}: first-step logits bit-identical");
        replies.push(a.ids);
    }
}

#[test]
fn llama() {
    paged_matches_contiguous("llama");
}

#[test]
fn gemma3_with_sliding_windows() {
    paged_matches_contiguous("gemma3");
}

#[test]
fn gemma4() {
    paged_matches_contiguous("gemma4");
}

#[test]
fn qwen3_5_with_recurrent_layers() {
    paged_matches_contiguous("qwen3_5");
}

#[test]
fn qwen3_5_moe() {
    paged_matches_contiguous("qwen3_5_moe");
}

#[test]
fn gpt_oss_moe_with_sliding_windows() {
    paged_matches_contiguous("gpt_oss");
}

#[test]
fn lfm2_with_convolutions() {
    paged_matches_contiguous("lfm2");
}

fn quantized(bits: u8) -> LoadOptions {
    let kv_quantization = Some(KvQuantization::new(bits, KvQuantization::DEFAULT_GROUP_SIZE).unwrap());
    LoadOptions { kv_quantization, ..LoadOptions::default() }
}

/// Quantized keys/values page as full ones do (their data, scales and biases cut alike).
#[test]
fn llama_with_8_and_4_bit_keys_values() {
    paged_matches_contiguous_with("llama", quantized(8));
    paged_matches_contiguous_with("llama", quantized(4));
}

#[test]
fn gemma3_with_8_bit_keys_values_and_sliding_windows() {
    paged_matches_contiguous_with("gemma3", quantized(8));
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().flatten().map(|e| e.path()).collect();
    files.sort();
    files
}

#[test]
fn blocks_on_disk_are_shared_and_a_damaged_one_is_discarded() {
    let dir = tempfile::tempdir().unwrap();
    let model = long_context("llama", dir.path());
    let cache = dir.path().join("cache");
    let blocks = cache.join("blocks");
    let on_disk = || start_with(&model, PrefixOptions { dir: Some(cache.clone()), ..Default::default() }, LoadOptions::default());
    let prompt: Vec<u32> = (0..2 * PAGE + 50).map(|i| (3 + i * 31 % 370) as u32).collect();
    let edited: Vec<u32> = prompt[..2 * PAGE + 10].iter().copied().chain([7, 8, 9]).collect();
    {
        let (engine, id, _) = on_disk();
        run(&engine, id, &prompt, "disk-first");
        run(&engine, id, &edited, "disk-edit"); // shares the first two pages
    } // a clean shutdown writes both conversations
    assert_eq!(files(&blocks).len(), 2, "two conversations sharing two pages: two block files");

    // Read back, the blocks give what was computed.
    let mut next = edited.clone();
    next.push(10);
    let cold = {
        let (engine, id, _) = start(&model, true, LoadOptions::default());
        run(&engine, id, &next, "disk-cold")
    };
    {
        let (engine, id, _) = on_disk();
        let warm = run(&engine, id, &next, "disk-warm");
        assert_eq!(warm.reused, edited.len(), "the edit, from disk");
        assert_eq!(warm.ids, cold.ids);
    }

    for damage in ["corrupt", "truncated"] {
        let block = files(&blocks).remove(0);
        let mut bytes = std::fs::read(&block).unwrap();
        match damage {
            "corrupt" => {
                let n = bytes.len();
                bytes[n - 64..].iter_mut().for_each(|b| *b ^= 0x5a);
            }
            _ => bytes.truncate(bytes.len() / 2),
        }
        std::fs::write(&block, bytes).unwrap();
        let (engine, id, _) = on_disk();
        let out = run(&engine, id, &next, &format!("disk-{damage}"));
        assert!(out.reused < PAGE, "{damage}: nothing that needs the block is reused (reused {})", out.reused);
        assert_eq!(out.ids, cold.ids, "{damage}: computed afresh");
        assert!(!block.exists(), "{damage}: the damaged block is gone");
        drop(engine);
        // The conversation computed afresh wrote its blocks again.
        assert_eq!(files(&blocks).len(), 2, "{damage}");
    }
}
