//! Embedding models against sentence-transformers 6.3 (transformers 5.25, torch float32 CPU) on
//! the tiny random checkpoints tests/reference/make_embeddings.py makes: a Qwen3-Embedding-like
//! one (causal qwen3, last-token pooling, the tokenizer appending <|endoftext|>, the query
//! instruction) and an EmbeddingGemma-like one (bidirectional gemma3_text with centred sliding
//! windows, mean pooling, two Dense layers, the query and document prompts). Every case's token
//! ids must equal the reference's and its vector lie within `COSINE_TOLERANCE` of the
//! reference's; the same checkpoints with one part of the recipe changed (attention, pooling)
//! must not, so the comparison can tell.

mod common;

use std::path::Path;

use common::{fixture, floats, ids, json};
use confab_engine::model::embedding::{EmbedPrompt, EmbeddingHead};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::Tokenizer;
use serde_json::Value;

/// Cosine distance (1 - cos) allowed between our vector and sentence-transformers'. float32 on
/// both sides; what differs is summation order.
const COSINE_TOLERANCE: f64 = 1e-5;

/// A changed recipe must move some vector at least this far.
const CHANGED_RECIPE_DISTANCE: f64 = 1e-3;

fn cosine_distance(a: &[f32], b: &[f32]) -> f64 {
    assert_eq!(a.len(), b.len(), "vector lengths differ");
    let dot: f64 = a.iter().zip(b).map(|(x, y)| *x as f64 * *y as f64).sum();
    let norm = |v: &[f32]| v.iter().map(|x| (*x as f64).powi(2)).sum::<f64>().sqrt();
    1.0 - dot / (norm(a) * norm(b))
}

/// An engine that batches several texts in a call (the CPU's default is one per pass), so every
/// call of several texts here goes through the padded path. Every test sets the same value
/// before the engine first reads it.
fn engine() -> Engine {
    std::env::set_var("CONFAB_EMBED_BATCH_TOKENS", "4096");
    Engine::start(EngineOptions::default()).unwrap()
}

fn prompt_of(case: &Value) -> EmbedPrompt {
    match case["kind"].as_str().unwrap() {
        "query" => EmbedPrompt::Query,
        "document" => EmbedPrompt::Document,
        "prompt" => EmbedPrompt::Text(case["prompt"].as_str().unwrap().to_string()),
        other => panic!("unknown case kind {other}"),
    }
}

/// Each case's vector from the engine, loading the folder at `dir`.
fn vectors(dir: &Path, cases: &[Value]) -> Vec<Vec<f32>> {
    let engine = engine();
    let (model, info) = engine.load(dir, LoadOptions::default(), |_| {}).unwrap();
    let embedding = info.embedding.expect("loaded as an embedding model");
    assert_eq!(embedding.dimensions, 64);
    cases
        .iter()
        .map(|case| {
            let text = case["text"].as_str().unwrap().to_string();
            let out = engine.embed(model, vec![text], prompt_of(case)).unwrap();
            assert_eq!(out.prompt_tokens, case["ids"].as_array().unwrap().len(), "prompt tokens");
            out.vectors.into_iter().next().unwrap()
        })
        .collect()
}

fn check(name: &str) {
    let dir = fixture(name);
    let reference = json(&dir.join("reference.json"));
    let cases = reference["cases"].as_array().unwrap();
    // Token ids: the prompt written before the text, the tokenizer's special tokens added.
    let tokenizer = Tokenizer::from_hf_folder(&dir).unwrap();
    let head = EmbeddingHead::read(&dir, 64).unwrap().unwrap();
    for case in cases {
        let prompted = head.prompted(case["text"].as_str().unwrap(), &prompt_of(case));
        assert_eq!(tokenizer.encode(&prompted, true).unwrap(), ids(&case["ids"]), "{name}: ids of {prompted:?}");
    }
    // Vectors, one call per case, and all in one call.
    let got = vectors(&dir, cases);
    let mut worst = 0f64;
    for (case, vector) in cases.iter().zip(&got) {
        let distance = cosine_distance(vector, &floats(&case["vector"]));
        assert!(distance <= COSINE_TOLERANCE, "{name}: {:?} is {distance:.2e} from the reference", case["text"]);
        let norm: f32 = vector.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-4, "{name}: normalized, got norm {norm}");
        worst = worst.max(distance);
    }
    println!("{name}: {} cases, worst cosine distance {worst:.2e} (tolerance {COSINE_TOLERANCE:.0e})", cases.len());
}

#[test]
fn qwen3_embedding_against_sentence_transformers() {
    check("qwen3_embedding");
}

#[test]
fn embeddinggemma_against_sentence_transformers() {
    check("embeddinggemma");
}

#[test]
fn several_texts_in_one_call_give_each_its_own_vector() {
    let dir = fixture("embeddinggemma");
    let reference = json(&dir.join("reference.json"));
    let documents: Vec<&Value> = reference["cases"].as_array().unwrap().iter().filter(|c| c["kind"] == "document").collect();
    let engine = engine();
    let (model, _) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    let texts = documents.iter().map(|c| c["text"].as_str().unwrap().to_string()).collect();
    let out = engine.embed(model, texts, EmbedPrompt::Document).unwrap();
    assert_eq!(out.vectors.len(), documents.len());
    assert_eq!(out.prompt_tokens, documents.iter().map(|c| c["ids"].as_array().unwrap().len()).sum::<usize>());
    for (case, vector) in documents.iter().zip(&out.vectors) {
        assert!(cosine_distance(vector, &floats(&case["vector"])) <= COSINE_TOLERANCE);
    }
}

/// Largest difference allowed between a text's vector embedded in a batch (padded to the
/// batch's longest, the padding masked out) and the same text embedded alone, per component of
/// the normalized vectors; float32 both ways, only summation order differs.
const BATCHED_TOLERANCE: f32 = 1e-5;

/// Every case of `name` several times over in one call (batched, padded, in no particular order
/// of length) against each case embedded alone and against sentence-transformers.
fn batched_equals_alone(name: &str) {
    let dir = fixture(name);
    let reference = json(&dir.join("reference.json"));
    let cases = reference["cases"].as_array().unwrap();
    let engine = engine();
    let (model, _) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    let head = EmbeddingHead::read(&dir, 64).unwrap().unwrap();
    // The prompt written into the text, so that cases with different prompts share a call.
    let texts: Vec<String> = cases.iter().map(|c| head.prompted(c["text"].as_str().unwrap(), &prompt_of(c))).collect();
    let as_written = EmbedPrompt::Text(String::new());
    let alone: Vec<Vec<f32>> =
        texts.iter().map(|t| engine.embed(model, vec![t.clone()], as_written.clone()).unwrap().vectors.remove(0)).collect();
    // Each case three times, interleaved, so batches mix lengths and some texts sit beside copies.
    let order: Vec<usize> = (0..3 * cases.len()).map(|i| (i * 5) % cases.len()).collect();
    let batched = engine.embed(model, order.iter().map(|&i| texts[i].clone()).collect(), as_written.clone()).unwrap();
    assert_eq!(batched.prompt_tokens, order.iter().map(|&i| cases[i]["ids"].as_array().unwrap().len()).sum::<usize>());
    let (mut worst, mut worst_reference) = (0f32, 0f64);
    for (&i, vector) in order.iter().zip(&batched.vectors) {
        let difference = vector.iter().zip(&alone[i]).map(|(a, b)| (a - b).abs()).fold(0.0, f32::max);
        assert!(difference <= BATCHED_TOLERANCE, "{name}: case {i} batched is {difference:.2e} from alone");
        let distance = cosine_distance(vector, &floats(&cases[i]["vector"]));
        assert!(distance <= COSINE_TOLERANCE, "{name}: case {i} batched is {distance:.2e} from the reference");
        worst = worst.max(difference);
        worst_reference = worst_reference.max(distance);
    }
    println!(
        "{name}: {} texts in one call; worst component difference from alone {worst:.2e} (tolerance {BATCHED_TOLERANCE:.0e}), \
         worst cosine distance to the reference {worst_reference:.2e}",
        order.len()
    );
}

#[test]
fn qwen3_embedding_batched_equals_alone() {
    batched_equals_alone("qwen3_embedding");
}

#[test]
fn embeddinggemma_batched_equals_alone() {
    batched_equals_alone("embeddinggemma");
}

/// A scratch copy of a fixture with `edit` applied to one of its JSON files.
fn edited(name: &str, file: &str, edit: impl FnOnce(&mut Value)) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    copy_tree(&fixture(name), dir.path());
    let path = dir.path().join(file);
    let mut value = json(&path);
    edit(&mut value);
    std::fs::write(&path, value.to_string()).unwrap();
    dir
}

fn copy_tree(from: &Path, to: &Path) {
    for entry in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

fn farthest_from_reference(name: &str, dir: &Path) -> f64 {
    let reference = json(&fixture(name).join("reference.json"));
    let cases = reference["cases"].as_array().unwrap();
    let got = vectors(dir, cases);
    let farthest = cases.iter().zip(&got).map(|(c, v)| cosine_distance(v, &floats(&c["vector"]))).fold(0.0, f64::max);
    println!("{name} changed: farthest vector {farthest:.2e} from the reference");
    farthest
}

#[test]
fn the_comparison_tells_a_changed_recipe() {
    // EmbeddingGemma read causally (with causal windows) instead of both ways.
    let causal = edited("embeddinggemma", "config.json", |c| c["use_bidirectional_attention"] = Value::Bool(false));
    let d = farthest_from_reference("embeddinggemma", causal.path());
    assert!(d > CHANGED_RECIPE_DISTANCE, "causal attention gave vectors within {d:.2e}");
    // Its sliding windows as wide as the texts: only the windows' centring and width differ.
    let wide = edited("embeddinggemma", "config.json", |c| c["sliding_window"] = Value::from(4096));
    let d = farthest_from_reference("embeddinggemma", wide.path());
    assert!(d > CHANGED_RECIPE_DISTANCE, "unlimited windows gave vectors within {d:.2e}");
    // Qwen3-Embedding mean-pooled instead of reading its last token.
    let mean = edited("qwen3_embedding", "1_Pooling/config.json", |c| {
        c["pooling_mode_lasttoken"] = Value::Bool(false);
        c["pooling_mode_mean_tokens"] = Value::Bool(true);
    });
    let d = farthest_from_reference("qwen3_embedding", mean.path());
    assert!(d > CHANGED_RECIPE_DISTANCE, "mean pooling gave vectors within {d:.2e}");
}

#[test]
fn an_embedding_model_refuses_to_chat_and_a_chat_model_to_embed() {
    let engine = engine();
    let (embedder, _) = engine.load(fixture("qwen3_embedding"), LoadOptions::default(), |_| {}).unwrap();
    let request = Request::new(embedder, Prompt::Tokens(vec![5, 6, 7]), SamplingParams::greedy());
    let error = engine
        .generate(request)
        .find_map(|e| match e {
            Event::Error(e) => Some(e.to_string()),
            _ => None,
        })
        .expect("an error");
    assert!(error.contains("is an embedding model"), "{error}");
    let (chat, info) = engine.load(fixture("qwen3"), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.embedding.is_none());
    let error = engine.embed(chat, vec!["hello".into()], EmbedPrompt::Document).unwrap_err().to_string();
    assert!(error.contains("not an embedding model"), "{error}");
}

#[test]
fn an_input_longer_than_the_model_reads_is_refused() {
    let short = edited("qwen3_embedding", "sentence_bert_config.json", |c| c["max_seq_length"] = Value::from(8));
    let engine = engine();
    let (model, _) = engine.load(short.path(), LoadOptions::default(), |_| {}).unwrap();
    let error = engine.embed(model, vec!["a text that is surely more than eight tokens long".into()], EmbedPrompt::Document).unwrap_err();
    assert!(error.to_string().contains("reads at most 8"), "{error}");
}
