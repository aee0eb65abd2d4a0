//! Model files: GGUF headers and metadata (with the vocabulary and template built from them),
//! safetensors headers, and a Hugging Face folder's config.json, tokenizer.json and
//! tokenizer_config.json, each through the entry points discovery and loading use. No weights
//! are loaded: too slow, and MLX's business.

use std::path::{Path, PathBuf};

use confab_engine::model::format::{gguf, gguf_header, hf};
use confab_engine::{ChatMessage, ChatTemplate, Tokenizer};

/// A GGUF as discovery reads it: the header (metadata and tensor table) by our own reader, then
/// the summary the model picker shows.
pub fn gguf_header(data: &[u8]) {
    let (_dir, path) = crate::as_file("model.gguf", data);
    if let Ok(header) = gguf_header::read_header(&path) {
        let _ = gguf::loaded_weight_bytes(&header);
        let _ = gguf::unreadable_types(&header.tensor_types);
    }
    let _ = confab_engine::discover(std::slice::from_ref(&path));
}

/// A GGUF's vocabulary and chat template as loading reads them: the metadata alone through MLX's
/// reader (`gguf::metadata_only`, after our header reader has vetted it), the tokenizer built
/// from it, a few encodings and decodings, and its template rendered.
pub fn gguf_vocab(data: &[u8]) {
    let (_dir, path) = crate::as_file("model.gguf", data);
    let Ok(file) = gguf::metadata_only(&path) else { return };
    if let Ok(tokenizer) = Tokenizer::from_gguf(&file, &path) {
        use_tokenizer(&tokenizer);
    }
}

/// The text a tokenizer is tried on: specials, spaces, bytes that no token spells.
const SAMPLE_TEXT: &str = "Hello <|im_start|>user\n  wörld ▁ <s> 12.5 \u{1F600}\t<think>\u{0}</think>";

/// What loading does with a tokenizer: encode a prompt, decode the ids, take the template.
fn use_tokenizer(tokenizer: &Tokenizer) {
    if let Ok(ids) = tokenizer.encode(SAMPLE_TEXT, true) {
        let _ = tokenizer.decode(&ids, false);
        let _ = tokenizer.decode(&ids, true);
    }
    let _ = tokenizer.decode(&[0, 1, 2, u32::MAX], false);
    if let Ok(Some(template)) = ChatTemplate::for_tokenizer(tokenizer) {
        let _ = confab_engine::ReplyFormat::detect(Some(template.source()));
        if let Ok(prompt) = template.render(&[ChatMessage::system("Be brief."), ChatMessage::user("Hi")], true, None) {
            let _ = tokenizer.encode_prompt(&prompt);
        }
    }
}

/// A safetensors file's header, checked as loading checks it before MLX maps the file; what
/// the check passes goes on to MLX's reader, and each tensor is read (the check holds them to
/// the file's size).
pub fn safetensors_header(data: &[u8]) {
    let (_dir, path) = crate::as_file("model.safetensors", data);
    if hf::validate_safetensors(&path).is_err() {
        return;
    }
    if let Ok(tensors) = mlx_rs::Array::load_safetensors(&path) {
        for tensor in tensors.values() {
            let _ = tensor.eval();
        }
    }
}

/// The model folder every folder target starts from: a small Qwen3 checkpoint's files (its
/// weights left out: a file of that name, empty, is enough for discovery).
const FOLDER: &str = "tests/reference/fixtures/tiny/qwen3";
const FOLDER_FILES: [&str; 4] = ["config.json", "tokenizer.json", "tokenizer_config.json", "generation_config.json"];

/// The fixture folder's files, read once.
fn folder_files() -> &'static [(&'static str, Vec<u8>)] {
    static FILES: std::sync::OnceLock<Vec<(&'static str, Vec<u8>)>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        let root = crate::repository_root().join(FOLDER);
        FOLDER_FILES.iter().map(|&name| (name, std::fs::read(root.join(name)).unwrap_or_default())).collect()
    })
}

/// A model folder with `name` holding `data` and the fixture's other files.
fn model_folder(name: &str, data: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let (dir, path) = crate::as_file(name, data);
    let folder = path.parent().expect("a folder").to_path_buf();
    for (file, bytes) in folder_files().iter().filter(|(file, _)| *file != name) {
        std::fs::write(folder.join(file), bytes).expect("a fixture file");
    }
    std::fs::write(folder.join("model.safetensors"), b"").expect("a weights file");
    (dir, folder)
}

/// The folder as discovery and loading read it, short of the weights: the summary, the
/// configuration, the tokenizer and its template.
fn read_folder(folder: &Path) {
    let _ = confab_engine::discover(&[folder.to_path_buf()]);
    if let Ok((_, config)) = hf::read_config(folder, confab_engine::config_defaults) {
        let _ = confab_engine::model::parameter_count(&config);
        let _ = confab_engine::model::kv_cache_bytes(&config, 4096);
    }
    if let Ok(tokenizer) = Tokenizer::from_hf_folder(folder) {
        use_tokenizer(&tokenizer);
    }
}

pub fn model_config(data: &[u8]) {
    let (_dir, folder) = model_folder("config.json", data);
    read_folder(&folder);
}

pub fn model_tokenizer(data: &[u8]) {
    let (_dir, folder) = model_folder("tokenizer.json", data);
    read_folder(&folder);
}

pub fn model_tokenizer_config(data: &[u8]) {
    let (_dir, folder) = model_folder("tokenizer_config.json", data);
    read_folder(&folder);
}
