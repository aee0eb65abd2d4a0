//! Finding models on disk without loading them: the app's models folder, the Hugging Face
//! cache, LM Studio's folders, Ollama's store and folders the user adds.

use std::path::{Path, PathBuf};

use crate::model::format::gguf_header::{self, MetaValue};
use crate::model::format::{gguf, hf, Format};
use crate::model::runs_here::{runs_here, Architecture};
use crate::model::{memory, ollama, registry};
use crate::state::StateKind;

#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ModelSummary {
    pub name: String,
    pub path: PathBuf,
    pub source: ModelSource,
    pub format: Format,
    pub architecture: String,
    /// Whether this build can run it: its architecture (`runs_here`) and, for a GGUF, its
    /// tensor types (`gguf::unreadable_types`).
    pub supported: bool,
    /// Why not, as the picker says it, when it cannot.
    pub unsupported_reason: Option<String>,
    /// `bf16`, `4-bit`, `Q4_1`, …
    pub quantization: String,
    pub size_bytes: u64,
    pub context_length: Option<usize>,
    pub vision: bool,
    pub audio: bool,
    /// Has a vision tower, a video token and a video processor config (the loaded model's
    /// `ModelInfo::video` says for sure).
    pub video: bool,
    /// The number of weights of its text model, where its configuration tells.
    pub parameters: Option<u64>,
    /// About what its weights take in memory as loaded (a GGUF's tensors widened at load count
    /// at their widened size).
    pub weights_bytes: u64,
    /// About what it takes in memory: the weights as loaded (a GGUF's tensors widened at load count
    /// at their widened size), plus the key/value cache of a conversation that fills its whole context
    /// (the engine's default), in the dtype it computes in here.
    pub memory_needed_bytes: u64,
    /// This machine's memory, to set `memory_needed_bytes` against.
    pub machine_memory_bytes: u64,
    /// Whether it fits this machine (`model::memory::fits_in_memory`).
    pub fits: bool,
    /// An embedding model (a sentence-transformers folder, `model::embedding`): it gives
    /// vectors, not replies, so the chat picker does not offer it.
    pub embedding: bool,
    /// Writes its replies by denoising canvases of tokens in parallel (block diffusion), its
    /// family says; the loaded model's `ModelInfo::denoising` has its parameters.
    pub denoising: bool,
}

/// Where a model was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum ModelSource {
    /// A model folder or `.gguf` file in a folder searched.
    Folder,
    /// Ollama's store: named by its manifest (`llama3.2:3b`), loaded from its blob in place.
    Ollama,
}

/// Every model under `folders` (searched a few levels deep; a model's own folder or GGUF file
/// may be among them), sorted by name.
pub fn discover(folders: &[PathBuf]) -> Vec<ModelSummary> {
    let mut found = vec![];
    for folder in folders {
        walk(folder, 0, &mut found);
    }
    found.sort_by(|a, b| a.name.cmp(&b.name).then(a.path.cmp(&b.path)));
    found.dedup_by(|a, b| a.path == b.path);
    found
}

fn walk(dir: &Path, depth: usize, found: &mut Vec<ModelSummary>) {
    // HF cache: hub/models--org--name/snapshots/<rev>/ is four levels below the hub folder.
    if depth > 5 {
        return;
    }
    // A GGUF file named itself (a model given by its path).
    if has_gguf_name(dir) && dir.is_file() {
        found.extend(summarize_gguf(dir, display_name(dir), ModelSource::Folder));
        return;
    }
    if is_model_folder(dir) {
        if let Some(summary) = summarize_folder(dir) {
            found.push(summary);
        }
        return;
    }
    if ollama::is_store(dir) {
        for model in ollama::models(dir) {
            found.extend(summarize_gguf(&model.blob, model.name, ModelSource::Ollama));
        }
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            walk(&path, depth + 1, found);
        } else if has_gguf_name(&path) {
            found.extend(summarize_gguf(&path, display_name(&path), ModelSource::Folder));
        }
    }
}

/// A model in the Hugging Face layout: a folder with its `config.json` at the top.
pub fn is_model_folder(dir: &Path) -> bool {
    dir.join("config.json").is_file()
}

/// A GGUF model file, as its name says.
pub fn has_gguf_name(path: &Path) -> bool {
    path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf"))
}

/// What a model at `path` is called: its repository in the Hugging Face cache (whose folders
/// are named by commit), its name in Ollama's store (whose blobs are named by digest), else a
/// GGUF file's stem or the folder's name.
pub fn display_name(path: &Path) -> String {
    if let Some(name) = hub_repo_name(path).or_else(|| ollama::name_of_blob(path)) {
        return name;
    }
    let name = if path.is_file() { path.file_stem() } else { path.file_name() };
    name.map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| path.display().to_string())
}

/// For a model in the Hugging Face cache, its repository ("owner/name"): snapshots are named by
/// revision, and the repository's folder is above them.
pub fn hub_repo_name(path: &Path) -> Option<String> {
    let components: Vec<String> = path.components().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    let pos = components.iter().rposition(|c| c == "snapshots")?;
    let repo = pos.checked_sub(1).and_then(|i| components[i].strip_prefix("models--"))?;
    Some(repo.replace("--", "/"))
}

fn summarize_folder(dir: &Path) -> Option<ModelSummary> {
    let text = std::fs::read_to_string(dir.join("config.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let text_config = json.get("text_config").unwrap_or(&json);
    let architecture = json.get("model_type").and_then(|v| v.as_str()).unwrap_or("unknown").to_string();
    let unsupported_reason = (!runs_here(Architecture::Config(&json))).then(|| architecture_unsupported(&architecture));
    let files = hf::shard_files(dir).ok()?;
    let size_bytes = files.iter().filter_map(|f| std::fs::metadata(f).ok()).map(|m| m.len()).sum();
    let quantization = match json.get("quantization").or_else(|| json.get("quantization_config")) {
        Some(q) => q.get("bits").and_then(|b| b.as_u64()).map_or("quantized".into(), |b| format!("{b}-bit")),
        None => match text_config.get("torch_dtype").or_else(|| json.get("torch_dtype")).and_then(|v| v.as_str()) {
            Some("bfloat16") => "bf16".into(),
            Some("float16") => "fp16".into(),
            Some("float32") => "fp32".into(),
            _ => "unknown".into(),
        },
    };
    let context_length = text_config.get("max_position_embeddings").and_then(|v| v.as_u64()).map(|v| v as usize);
    // The engine's own reading of the configuration, where it can read it (a supported family).
    let config = hf::read_config(dir, registry::defaults).ok().map(|(_, config)| config);
    // The family the loader picks: a multimodal wrapper's own when a family claims it.
    let family = config.as_ref().and_then(|c| registry::family(&registry::architecture(&json, &c.arch)));
    let reads = crate::model::family::media_reads(family, &json, dir);
    let memory_needed_bytes = memory::memory_needed(size_bytes, config.as_ref().map(|c| (c, context_length.unwrap_or(c.max_position))));
    Some(ModelSummary {
        name: display_name(dir),
        path: dir.to_path_buf(),
        source: ModelSource::Folder,
        format: Format::Safetensors,
        supported: unsupported_reason.is_none(),
        unsupported_reason,
        architecture,
        quantization,
        size_bytes,
        context_length,
        vision: reads.vision,
        audio: reads.audio,
        video: reads.video,
        parameters: config.as_ref().map(crate::model::parameter_count),
        weights_bytes: size_bytes,
        memory_needed_bytes,
        machine_memory_bytes: crate::device::physical_memory(),
        fits: memory::fits_in_memory(memory_needed_bytes, crate::device::physical_memory()),
        embedding: crate::model::embedding::is_embedding_folder(dir),
        denoising: family.is_some_and(|f| f.denoising),
    })
}

/// The picker's words for an architecture this build has no family for.
fn architecture_unsupported(architecture: &str) -> String {
    format!("The {architecture} architecture isn't supported yet")
}

fn summarize_gguf(path: &Path, name: String, source: ModelSource) -> Option<ModelSummary> {
    let header = gguf_header::read_header(path).ok()?;
    let weight_bytes = gguf::loaded_weight_bytes(&header);
    let meta = header.metadata;
    let text = |k: &str| match meta.get(k) {
        Some(MetaValue::Str(s)) => Some(s.clone()),
        _ => None,
    };
    let int = |k: &str| match meta.get(k) {
        Some(MetaValue::Int(i)) => Some(*i),
        _ => None,
    };
    let architecture = text("general.architecture").unwrap_or_else(|| "unknown".into());
    let key = |k: &str| int(&format!("{architecture}.{k}")).map(|v| v as usize);
    let context_length = key("context_length");
    let size_bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let unreadable = gguf::unreadable_types(&header.tensor_types);
    // A vocabulary type the tokenizer does not read would stop loading (llama.cpp also writes
    // `bert`, `t5`, `rwkv` and others).
    let vocabulary = text("tokenizer.ggml.model").filter(|v| !crate::text::GGUF_VOCABULARY_TYPES.contains(&v.as_str()));
    let unsupported_reason = if !runs_here(Architecture::Gguf(&architecture)) {
        Some(architecture_unsupported(&architecture))
    } else if !unreadable.is_empty() {
        Some(format!("Its {} weights aren't supported yet", unreadable.join(", ")))
    } else {
        vocabulary.map(|v| format!("Its {v} vocabulary isn't supported yet"))
    };
    // Read from the header alone, every layer is taken to attend fully (an upper bound for
    // GGUFs with sliding or recurrent layers).
    let kv_bytes = match (key("block_count"), key("attention.head_count"), key("embedding_length")) {
        (Some(layers), Some(heads), Some(hidden)) if heads > 0 => {
            let kv_heads = key("attention.head_count_kv").unwrap_or(heads);
            let head_dim = key("attention.key_length").unwrap_or(hidden / heads);
            // One layer's, times the layers (the count is the file's: never walked one by one).
            let layer = crate::model::state_bytes(
                [StateKind::KeysValues],
                context_length.unwrap_or(0),
                kv_heads,
                head_dim,
                crate::model::state_element_bytes(),
            );
            layer.saturating_mul(layers as u64)
        }
        _ => 0,
    };
    Some(ModelSummary {
        name,
        path: path.to_path_buf(),
        source,
        format: Format::Gguf,
        supported: unsupported_reason.is_none(),
        unsupported_reason,
        quantization: int("general.file_type").map_or("unknown", gguf_header::file_type_name).to_string(),
        size_bytes,
        context_length,
        architecture,
        vision: false,
        audio: false,
        video: false,
        parameters: Some(header.parameters).filter(|&p| p > 0),
        weights_bytes: weight_bytes,
        memory_needed_bytes: weight_bytes.saturating_add(kv_bytes),
        machine_memory_bytes: crate::device::physical_memory(),
        fits: memory::fits_in_memory(weight_bytes.saturating_add(kv_bytes), crate::device::physical_memory()),
        // GGUF files carry no sentence-transformers modules.
        embedding: false,
        denoising: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
    }

    /// Writes a manifest at `manifests/<place>` whose model layer is `digest`, beside the other
    /// layers Ollama writes.
    fn manifest(store: &Path, place: &str, digest: &str) {
        let path = store.join("manifests").join(place);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let json = serde_json::json!({
            "schemaVersion": 2,
            "mediaType": "application/vnd.docker.distribution.manifest.v2+json",
            "config": {"mediaType": "application/vnd.docker.container.image.v1+json", "digest": "sha256:00", "size": 2},
            "layers": [
                {"mediaType": "application/vnd.ollama.image.model", "digest": digest, "size": 1},
                {"mediaType": "application/vnd.ollama.image.projector", "digest": "sha256:ffff", "size": 1},
                {"mediaType": "application/vnd.ollama.image.template", "digest": "sha256:eeee", "size": 1},
                {"mediaType": "application/vnd.ollama.image.params", "digest": "sha256:dddd", "size": 1}
            ]
        });
        std::fs::write(path, json.to_string()).unwrap();
    }

    /// An Ollama store of two tiny GGUFs, one of them under two tags, and manifests that cannot
    /// be used (malformed, a missing blob, a digest that would leave the blobs folder).
    fn ollama_store(store: &Path) -> (PathBuf, PathBuf) {
        std::fs::create_dir_all(store.join("blobs")).unwrap();
        let lfm2 = store.join("blobs/sha256-aa11");
        let smollm3 = store.join("blobs/sha256-bb22");
        std::fs::copy(fixture("lfm2_gguf/lfm2.gguf"), &lfm2).unwrap();
        std::fs::copy(fixture("smollm3_gguf/smollm3.gguf"), &smollm3).unwrap();
        manifest(store, "registry.ollama.ai/library/lfm2/tiny", "sha256:aa11");
        manifest(store, "registry.ollama.ai/library/lfm2/latest", "sha256:aa11");
        manifest(store, "hf.co/someone/SmolLM3-GGUF/Q8_0", "sha256:bb22");
        manifest(store, "registry.ollama.ai/library/gone/latest", "sha256:cc33");
        manifest(store, "registry.ollama.ai/library/escape/latest", "sha256:../../x");
        let broken = store.join("manifests/registry.ollama.ai/library/broken/latest");
        std::fs::create_dir_all(broken.parent().unwrap()).unwrap();
        std::fs::write(broken, "{not json").unwrap();
        (lfm2, smollm3)
    }

    #[test]
    fn an_ollama_store_lists_its_models_by_name_and_tag_from_their_blobs() {
        let root = tempfile::tempdir().unwrap();
        let store = root.path().join(".ollama/models");
        let (lfm2, smollm3) = ollama_store(&store);
        // Found as a folder searched, or below one.
        for folder in [&store, &root.path().to_path_buf()] {
            let found = discover(std::slice::from_ref(folder));
            let listed: Vec<(&str, &Path, ModelSource)> = found.iter().map(|m| (m.name.as_str(), m.path.as_path(), m.source)).collect();
            assert_eq!(
                listed,
                [
                    ("hf.co/someone/SmolLM3-GGUF:Q8_0", smollm3.as_path(), ModelSource::Ollama),
                    ("lfm2:latest", lfm2.as_path(), ModelSource::Ollama)
                ]
            );
            assert_eq!((found[1].format, found[1].architecture.as_str()), (Format::Gguf, "lfm2"));
            assert!(found.iter().all(|m| m.supported && m.size_bytes > 0));
        }
        // The name a loaded blob is shown by; other files are named as before.
        assert_eq!(display_name(&lfm2), "lfm2:latest");
        assert_eq!(display_name(&fixture("lfm2_gguf/lfm2.gguf")), "lfm2");
        assert_eq!(Format::detect(&lfm2).unwrap(), Format::Gguf);
    }

    #[test]
    fn a_file_without_a_gguf_name_or_the_magic_is_no_model() {
        let root = tempfile::tempdir().unwrap();
        let blob = root.path().join("sha256-0123");
        std::fs::write(&blob, b"{\"not\": \"a model\"}").unwrap();
        assert!(Format::detect(&blob).is_err());
    }

    /// A GGUF whose header claims absurd sizes (found by the gguf_header fuzz target: the
    /// estimates overflowed, and 2^62 layers were walked one by one) is listed at once, its
    /// estimates at their ceiling.
    #[test]
    fn a_gguf_with_absurd_sizes_is_listed_at_once() {
        let mut bytes = b"GGUF".to_vec();
        bytes.extend(3u32.to_le_bytes());
        bytes.extend(1u64.to_le_bytes()); // tensors
        let metadata: [(&str, u64); 5] = [
            ("llama.block_count", 1 << 62),
            ("llama.attention.head_count", 1),
            ("llama.embedding_length", 1 << 40),
            ("llama.context_length", 1 << 40),
            ("llama.attention.head_count_kv", 1 << 40),
        ];
        bytes.extend((metadata.len() as u64 + 1).to_le_bytes());
        let string = |bytes: &mut Vec<u8>, s: &str| {
            bytes.extend((s.len() as u64).to_le_bytes());
            bytes.extend(s.as_bytes());
        };
        string(&mut bytes, "general.architecture");
        bytes.extend(8u32.to_le_bytes());
        string(&mut bytes, "llama");
        for (key, value) in metadata {
            string(&mut bytes, key);
            bytes.extend(10u32.to_le_bytes());
            bytes.extend(value.to_le_bytes());
        }
        string(&mut bytes, "token_embd.weight");
        bytes.extend(2u32.to_le_bytes());
        bytes.extend((1u64 << 40).to_le_bytes());
        bytes.extend((1u64 << 40).to_le_bytes());
        bytes.extend(0u32.to_le_bytes()); // F32
        bytes.extend(0u64.to_le_bytes());
        let root = tempfile::tempdir().unwrap();
        let path = root.path().join("absurd.gguf");
        std::fs::write(&path, bytes).unwrap();
        let began = std::time::Instant::now();
        let found = discover(std::slice::from_ref(&path));
        assert!(began.elapsed() < std::time::Duration::from_secs(1), "{:?}", began.elapsed());
        assert_eq!(found.len(), 1);
        assert_eq!((found[0].weights_bytes, found[0].memory_needed_bytes, found[0].fits), (u64::MAX, u64::MAX, false));
    }

    /// The picker's badges follow what the family loads: Gemma 3's family loads no vision tower,
    /// so a Gemma 3 checkpoint with one gets no vision badge; Mistral 3's does.
    #[test]
    fn a_badge_says_what_the_family_loads() {
        let tiny = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny");
        let root = tempfile::tempdir().unwrap();
        let gemma3 = root.path().join("gemma3-vision");
        std::fs::create_dir(&gemma3).unwrap();
        let text: serde_json::Value = serde_json::from_slice(&std::fs::read(tiny.join("gemma3/config.json")).unwrap()).unwrap();
        let wrapped =
            serde_json::json!({"model_type": "gemma3", "text_config": text, "vision_config": {"model_type": "siglip_vision_model"}});
        std::fs::write(gemma3.join("config.json"), wrapped.to_string()).unwrap();
        std::fs::copy(tiny.join("gemma3/model.safetensors"), gemma3.join("model.safetensors")).unwrap();
        let summary = summarize_folder(&gemma3).unwrap();
        assert!(summary.supported, "{:?}", summary.unsupported_reason);
        assert!(!summary.vision, "Gemma 3 loads text-only: no vision badge");
        let mistral3 = summarize_folder(&tiny.join("mistral3")).unwrap();
        assert!(mistral3.vision, "Mistral 3 loads its vision tower");
    }
}
