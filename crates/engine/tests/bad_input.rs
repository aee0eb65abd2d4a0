//! Bad input gives a typed error whose message says what to do; nothing panics, and the engine
//! keeps serving afterwards.

use std::path::Path;

use confab_engine::model::discover::discover;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_engine::EngineError;

fn tiny(name: &str) -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

/// A scratch copy of a tiny fixture to break.
fn copy_of(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(tiny(name)).unwrap().flatten() {
        std::fs::copy(entry.path(), dir.path().join(entry.file_name())).unwrap();
    }
    dir
}

fn load_error(engine: &Engine, path: &Path) -> EngineError {
    match engine.load(path, LoadOptions::default(), |_| {}) {
        Ok(_) => panic!("loading {} should fail", path.display()),
        Err(e) => e,
    }
}

/// The error a request ends with.
fn request_error(engine: &Engine, request: Request) -> EngineError {
    for event in engine.generate(request) {
        if let Event::Error(e) = event {
            return e;
        }
    }
    panic!("the request should have failed");
}

fn assert_says(err: &EngineError, words: &[&str]) {
    let message = err.to_string();
    for w in words {
        assert!(message.contains(w), "`{message}` should mention `{w}`");
    }
}

fn engine_with_tiny_llama() -> (Engine, ModelId) {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(tiny("llama"), LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

#[test]
fn missing_config() {
    let dir = copy_of("llama");
    std::fs::remove_file(dir.path().join("config.json")).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, dir.path());
    assert!(matches!(err, EngineError::ModelFormat { .. }), "{err:?}");
    assert_says(&err, &["config.json", "Pick a model folder"]);
}

#[test]
fn unknown_architecture() {
    let dir = copy_of("llama");
    let config = std::fs::read_to_string(dir.path().join("config.json")).unwrap().replace("\"llama\"", "\"mamba9\"");
    std::fs::write(dir.path().join("config.json"), config).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, dir.path());
    assert!(matches!(err, EngineError::UnknownArchitecture { .. }), "{err:?}");
    assert_says(&err, &["mamba9", "Supported", "llama", "gemma3_text"]);
}

#[test]
fn truncated_safetensors() {
    let dir = copy_of("llama");
    let file = dir.path().join("model.safetensors");
    let len = std::fs::metadata(&file).unwrap().len();
    std::fs::OpenOptions::new().write(true).open(&file).unwrap().set_len(len / 2).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["truncated", "Download the model again"]);
}

#[test]
fn corrupt_gguf() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();

    let garbage = dir.path().join("garbage.gguf");
    std::fs::write(&garbage, b"this is not a model at all").unwrap();
    let err = load_error(&engine, &garbage);
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");

    // A real GGUF cut short: the header is fine, the tensors are not there.
    let real = confab_paths::DefaultModel::manifest().path(&confab_paths::AppPaths::from_env());
    let bytes = std::fs::read(&real).unwrap();
    let truncated = dir.path().join("truncated.gguf");
    std::fs::write(&truncated, &bytes[..bytes.len() / 3]).unwrap();
    let err = load_error(&engine, &truncated);
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["Download the model again"]);

    // Cut short where our own block reader reads the tensors (Q5_0, which MLX's loader fails on;
    // gpt-oss's MXFP4 experts, which it leaves out): the error names the tensor whose blocks run out.
    let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny");
    for file in ["ministral3_gguf/ministral3-q5_0.gguf", "gpt_oss_gguf/gpt_oss_mxfp4-mxfp4.gguf"] {
        let bytes = std::fs::read(tiny.join(file)).unwrap();
        let truncated = dir.path().join("truncated-blocks.gguf");
        std::fs::write(&truncated, &bytes[..bytes.len() - 100]).unwrap();
        let err = load_error(&engine, &truncated);
        assert!(matches!(err, EngineError::CorruptWeights { .. }), "{file}: {err:?}");
        assert_says(&err, &["run past the end of the file", "Download the model again"]);
    }
}

/// A one-tensor llama GGUF whose tensor is `blocks` bytes of ggml type `ggml_type`.
fn one_tensor_gguf(path: &Path, ggml_type: u32, elements: u64, blocks: usize) {
    let text = |out: &mut Vec<u8>, s: &str| {
        out.extend((s.len() as u64).to_le_bytes());
        out.extend(s.as_bytes());
    };
    let mut out = b"GGUF".to_vec();
    out.extend(3u32.to_le_bytes());
    out.extend(1u64.to_le_bytes()); // tensors
    out.extend(1u64.to_le_bytes()); // metadata
    text(&mut out, "general.architecture");
    out.extend(8u32.to_le_bytes()); // a string
    text(&mut out, "llama");
    text(&mut out, "token_embd.weight");
    out.extend(1u32.to_le_bytes());
    out.extend(elements.to_le_bytes());
    out.extend(ggml_type.to_le_bytes());
    out.extend(0u64.to_le_bytes());
    out.resize(out.len().next_multiple_of(32), 0);
    out.resize(out.len() + blocks, 0);
    std::fs::write(path, out).unwrap();
}

#[test]
fn gguf_blocks_mlx_cannot_read_are_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    // The IQ types (IQ2_XXS: 66 bytes a block of 256; IQ4_NL: 18 bytes a block of 32): neither
    // MLX's loader nor our own block reader reads them.
    for (name, ggml_type, elements, bytes) in [("IQ2_XXS", 16, 256, 66), ("IQ4_NL", 20, 32, 18)] {
        let path = dir.path().join(format!("model-{name}.gguf"));
        one_tensor_gguf(&path, ggml_type, elements, bytes);
        let err = load_error(&engine, &path);
        assert!(matches!(err, EngineError::UnsupportedQuantization { .. }), "{err:?}");
        assert_says(&err, &[&format!("stored as {name}"), "Pick a Q4_K_M, Q6_K, Q8_0 or Q4_0 file"]);
        let summary = discover(&[dir.path().to_path_buf()]).into_iter().find(|m| m.path == path).expect("discovered");
        assert!(!summary.supported);
        assert_eq!(summary.unsupported_reason.as_deref(), Some(format!("Its {name} weights aren't supported yet").as_str()));
    }
}

#[test]
fn missing_tokenizer() {
    let dir = copy_of("llama");
    std::fs::remove_file(dir.path().join("tokenizer.json")).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, dir.path());
    assert!(matches!(err, EngineError::MissingTokenizer { .. }), "{err:?}");
    assert_says(&err, &["tokenizer.json"]);
}

#[test]
fn template_that_raises() {
    let dir = copy_of("llama");
    let path = dir.path().join("tokenizer_config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    config["chat_template"] =
        "{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}hi".into();
    std::fs::write(&path, config.to_string()).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(dir.path(), LoadOptions::default(), |_| {}).unwrap();
    let chat = vec![ChatMessage::system("be brief"), ChatMessage::user("hello")];
    let err = request_error(&engine, Request::new(model, Prompt::Chat(chat), SamplingParams::greedy()));
    assert!(matches!(err, EngineError::Template(_)), "{err:?}");
    assert_says(&err, &["System role not supported"]);
}

#[test]
fn prompt_longer_than_the_context() {
    let (engine, model) = engine_with_tiny_llama();
    let err = request_error(&engine, Request::new(model, Prompt::Tokens(vec![5; 300]), SamplingParams::greedy()));
    assert!(matches!(err, EngineError::ContextOverflow { prompt: 300, context: 256 }), "{err:?}");
    assert_says(&err, &["Shorten the conversation"]);
    // The engine still serves.
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 2;
    let events: Vec<Event> = engine.generate(Request::new(model, Prompt::Tokens(vec![5; 10]), sampling)).collect();
    assert!(matches!(events.last(), Some(Event::Done { .. })), "{events:?}");
}

#[test]
fn invalid_sampling_values() {
    let (engine, model) = engine_with_tiny_llama();
    type Case = (&'static str, fn(&mut SamplingParams));
    let cases: [Case; 4] = [
        ("temperature", |s| s.temperature = -1.0),
        ("top_p", |s| s.top_p = 1.5),
        ("min_p", |s| s.min_p = -0.1),
        ("repetition_penalty", |s| s.repetition_penalty = 0.0),
    ];
    for (name, break_it) in cases {
        let mut sampling = SamplingParams::default();
        break_it(&mut sampling);
        let err = request_error(&engine, Request::new(model, Prompt::Tokens(vec![5, 6, 7]), sampling));
        assert!(matches!(err, EngineError::InvalidSetting { .. }), "{name}: {err:?}");
        assert_says(&err, &[name]);
    }
}

#[test]
fn token_ids_outside_the_vocabulary_and_unknown_models() {
    let (engine, model) = engine_with_tiny_llama();
    let err = request_error(&engine, Request::new(model, Prompt::Tokens(vec![1, 100_000]), SamplingParams::greedy()));
    assert_says(&err, &["outside the vocabulary"]);
    let err = request_error(&engine, Request::new(ModelId(999), Prompt::Tokens(vec![1]), SamplingParams::greedy()));
    assert_says(&err, &["not loaded"]);
}

#[test]
fn not_a_model_path() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, Path::new("/nonexistent/model"));
    assert_says(&err, &["no such file or folder"]);
}

/// A tensor no layer of the configured model reads (here: the config says 2 layers, the
/// checkpoint has a third) is a load error naming it, for every family.
#[test]
fn tensors_left_over_after_loading_are_named() {
    let dir = copy_of("llama");
    let file = dir.path().join("model.safetensors");
    let mut tensors = mlx_rs::Array::load_safetensors(&file).unwrap();
    let norm = tensors["model.layers.0.input_layernorm.weight"].clone();
    tensors.insert("model.layers.2.input_layernorm.weight".into(), norm);
    mlx_rs::transforms::eval(tensors.values()).unwrap();
    let rewritten = dir.path().join("rewritten.safetensors");
    mlx_rs::Array::save_safetensors(tensors.iter().map(|(n, a)| (n.as_str(), a)), None, &rewritten).unwrap();
    std::fs::rename(&rewritten, &file).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let err = load_error(&engine, dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    assert_says(&err, &["model.layers.2.input_layernorm.weight", "not part of a llama model"]);
}
