//! What the model picker shows of a model before it is loaded: its parameters and the memory it
//! needs (weights plus a full context's key/value cache), read from headers only.

use std::path::{Path, PathBuf};

use confab_engine::model::discover::{discover, ModelSummary};
use confab_engine::model::format::{gguf, gguf_header};
use confab_engine::model::{kv_bytes_per_token_and_layer, LoadOptions};
use confab_engine::runtime::{Engine, EngineOptions};
use confab_paths::{AppPaths, DefaultModel};

/// The model at `path`, as discovery in `folder` finds it.
fn summary_of(folder: &Path, path: &Path) -> ModelSummary {
    discover(&[folder.to_path_buf()]).into_iter().find(|m| m.path == path).unwrap_or_else(|| panic!("{} was not found", path.display()))
}

#[test]
fn the_default_model_gives_its_parameters_and_the_memory_it_needs() {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    let model = summary_of(path.parent().unwrap(), &path);
    // SmolLM2-135M: 134.5 million weights; 30 layers of 3 KV heads of 64 dimensions.
    let parameters = model.parameters.expect("a GGUF header counts its weights");
    assert!((134_000_000..135_000_000).contains(&parameters), "{parameters}");
    let context = model.context_length.expect("the GGUF names its context") as u64;
    assert_eq!(context, 8192);
    let kv = 30 * context * kv_bytes_per_token_and_layer(3, 64);
    let header = gguf_header::read_header(&path).unwrap();
    assert_eq!(model.memory_needed_bytes, gguf::loaded_weight_bytes(&header) + kv);
    assert!(model.machine_memory_bytes > model.memory_needed_bytes, "this machine runs the default model");
}

#[test]
fn a_folder_model_counts_what_the_loaded_model_reports() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/llama");
    let dir = dir.canonicalize().unwrap();
    let model = summary_of(&dir, &dir);
    let mut options = EngineOptions::default();
    options.prefix.enabled = false;
    let engine = Engine::start(options).unwrap();
    let (_, info) = engine.load(&dir, LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(model.parameters, Some(info.parameters));
    // 2 layers of 2 KV heads of 16 dimensions, 256 tokens of context.
    assert_eq!(model.memory_needed_bytes, model.size_bytes + 2 * 256 * kv_bytes_per_token_and_layer(2, 16));
}

#[test]
fn an_embedding_folder_is_marked_as_one() {
    let tiny = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").canonicalize().unwrap();
    for (name, embedding) in [("qwen3_embedding", true), ("embeddinggemma", true), ("qwen3", false), ("gemma3", false)] {
        let dir = tiny.join(name);
        assert_eq!(summary_of(&dir, &dir).embedding, embedding, "{name}");
    }
}

#[test]
fn a_gguf_counts_the_blocks_widened_at_load_at_their_widened_size() {
    // make_gguf_more.py's Q5_0 and Q5_1 ministral3 files: the Q5 matrices are widened to float16
    // at load (2 bytes a value, not 22 or 24 bytes per 32 as on disk), Q4_0, Q4_1 and Q8_0 stay
    // packed as MLX's affine groups of 32 (the values, then a float16 scale and bias: 20 and 36
    // bytes per 32), and the rest is float32.
    let tiny = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/ministral3_gguf");
    let tiny = tiny.canonicalize().unwrap();
    for (file, q5, q5_block_bytes) in [("ministral3-q5_0.gguf", 6, 22), ("ministral3-q5_1.gguf", 7, 24)] {
        let path = tiny.join(file);
        let header = gguf_header::read_header(&path).unwrap();
        let (mut weights, mut widened, mut widened_on_disk) = (0u64, 0u64, 0u64);
        for t in &header.tensors {
            let values = t.elements();
            weights += match t.ggml_type {
                0 => values * 4,
                2 | 3 => values / 32 * 20,
                8 => values / 32 * 36,
                6 | 7 => values * 2,
                other => panic!("{file}: type {other} in `{}`", t.name),
            };
            if t.ggml_type == q5 {
                widened += values * 2;
                widened_on_disk += values / 32 * q5_block_bytes;
            }
        }
        assert!(widened > widened_on_disk, "{file} has no Q5 tensor");
        // 2 layers of 2 KV heads of 32, 1024 tokens of context.
        let kv = 2 * 1024 * kv_bytes_per_token_and_layer(2, 32);
        let model = summary_of(&tiny, &path);
        assert_eq!(model.memory_needed_bytes, weights + kv, "{file}");
        assert_eq!(gguf::loaded_weight_bytes(&header), weights, "{file}");
    }
}
