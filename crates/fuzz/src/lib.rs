//! Fuzz targets for the parsers that read strangers' bytes.
//!
//! Each target is a function from bytes to nothing that must neither panic (outside a parser's
//! own `catch_unwind`), nor hang, nor allocate without bound, whatever the bytes. The same
//! functions run two ways:
//! - `make fuzz` (scripts/fuzz.sh): cargo-fuzz and libFuzzer on the nightly toolchain, coverage
//!   guided, minutes per target; `fuzz/fuzz_targets/` holds one three-line file per target.
//! - `cargo test -p confab-fuzz` (in `make test`): each target over its seeds and a few seconds of
//!   deterministic mutations of them (`mutate.rs`), on the stable toolchain.

pub mod mutate;
pub mod targets;

use std::path::{Path, PathBuf};

/// One fuzz target.
pub struct Target {
    /// Its name: the cargo-fuzz binary (`fuzz/fuzz_targets/<name>.rs`) and corpus folder.
    pub name: &'static str,
    pub run: fn(&[u8]),
    /// Seed files or folders, relative to the repository root: the test fixtures of the format
    /// (and `fuzz/corpus/<name>/`, always). A last component `*.ext` takes the folder's files
    /// whose names end in `.ext` (a fixture folder that holds several formats).
    pub seeds: &'static [&'static str],
}

/// Every target; a new one is a function in `targets/` and a line here (and its three-line file
/// in `fuzz/fuzz_targets/`, which the smoke test checks).
pub const TARGETS: &[Target] = &[
    Target { name: "gguf_header", run: targets::models::gguf_header, seeds: &["tests/reference/fixtures/tiny_spm.gguf"] },
    // Documents (confab-documents), one target a format.
    Target {
        name: "document_pdf",
        run: targets::documents::pdf,
        seeds: &["crates/documents/tests/fixtures/*.pdf", "tests/reference/fixtures/documents/*.pdf"],
    },
    Target { name: "document_docx", run: targets::documents::docx, seeds: &["crates/documents/tests/fixtures/*.docx"] },
    Target { name: "document_html", run: targets::documents::html, seeds: &[] },
    Target { name: "document_csv", run: targets::documents::csv, seeds: &[] },
    Target { name: "document_text", run: targets::documents::text, seeds: &["crates/documents/tests/fixtures/expected.json"] },
    // Media (confab-media): images, audio clips and videos, one target a format.
    Target {
        name: "image_png",
        run: targets::media::image_png,
        seeds: &["crates/media/tests/fixtures/media/*.png", "tests/reference/fixtures/media_fidelity/*.png"],
    },
    Target {
        name: "image_jpeg",
        run: targets::media::image_jpeg,
        seeds: &["crates/media/tests/fixtures/media/*.jpg", "tests/reference/fixtures/media_fidelity/*.jpg"],
    },
    Target { name: "image_webp", run: targets::media::image_webp, seeds: &["crates/media/tests/fixtures/media/*.webp"] },
    Target {
        name: "image_gif",
        run: targets::media::image_gif,
        seeds: &["crates/media/tests/fixtures/media/*.gif", "tests/reference/fixtures/video/still.gif"],
    },
    Target { name: "image_bmp", run: targets::media::image_bmp, seeds: &["crates/media/tests/fixtures/media/*.bmp"] },
    Target { name: "image_tiff", run: targets::media::image_tiff, seeds: &["crates/media/tests/fixtures/media/*.tiff"] },
    Target { name: "audio_wav", run: targets::media::audio_wav, seeds: &["tests/reference/fixtures/media_fidelity/*.wav"] },
    Target {
        name: "audio_mp3",
        run: targets::media::audio_mp3,
        seeds: &["crates/media/tests/fixtures/media/*.mp3", "tests/reference/fixtures/media_fidelity/*.mp3"],
    },
    Target {
        name: "audio_flac",
        run: targets::media::audio_flac,
        seeds: &["crates/media/tests/fixtures/media/*.flac", "tests/reference/fixtures/media_fidelity/*_22050_mono.flac"],
    },
    Target { name: "audio_ogg", run: targets::media::audio_ogg, seeds: &["crates/media/tests/fixtures/media/*.ogg"] },
    Target {
        name: "audio_m4a",
        run: targets::media::audio_m4a,
        seeds: &[
            "crates/media/tests/fixtures/media/*.m4a",
            "crates/media/tests/fixtures/media/*.aac",
            "tests/reference/fixtures/media_fidelity/*.m4a",
        ],
    },
    Target {
        name: "video_mp4",
        run: targets::media::video_mp4,
        seeds: &["tests/reference/fixtures/video/*.mp4", "tests/reference/fixtures/video/*.mov"],
    },
    Target {
        name: "video_animated",
        run: targets::media::video_animated,
        seeds: &[
            "tests/reference/fixtures/video/*.gif",
            "tests/reference/fixtures/video/*.webp",
            "crates/media/tests/fixtures/media/animated.gif",
        ],
    },
    Target { name: "video_h264_config", run: targets::media::video_h264_config, seeds: &[] },
    Target { name: "video_hevc_config", run: targets::media::video_hevc_config, seeds: &[] },
    // Protocols: the server's request bodies per API door, MCP messages, remote providers' streams.
    Target { name: "chat_completions", run: targets::protocols::chat_completions, seeds: &[] },
    Target { name: "completions", run: targets::protocols::completions, seeds: &[] },
    Target { name: "responses", run: targets::protocols::responses, seeds: &["tests/server/agent_requests/codex-0.171.0-first.json"] },
    Target { name: "messages", run: targets::protocols::messages, seeds: &["tests/server/agent_requests/claude-code-2.1.332-first.json"] },
    Target { name: "embeddings", run: targets::protocols::embeddings, seeds: &[] },
    Target { name: "ollama_chat", run: targets::protocols::ollama_chat, seeds: &[] },
    Target { name: "ollama_generate", run: targets::protocols::ollama_generate, seeds: &[] },
    Target { name: "ollama_embed", run: targets::protocols::ollama_embed, seeds: &[] },
    Target { name: "mcp_message", run: targets::protocols::mcp_message, seeds: &[] },
    Target { name: "mcp_servers_json", run: targets::protocols::mcp_servers_json, seeds: &[] },
    Target { name: "remote_sse", run: targets::protocols::remote_sse, seeds: &[] },
    Target { name: "remote_answer", run: targets::protocols::remote_answer, seeds: &[] },
    // The engine's: model files, templates, replies, constraints.
    Target {
        name: "gguf_vocab",
        run: targets::models::gguf_vocab,
        seeds: &["tests/reference/fixtures/tiny_spm.gguf", "fuzz/corpus/gguf_header"],
    },
    Target { name: "safetensors_header", run: targets::models::safetensors_header, seeds: &[] },
    Target {
        name: "model_config",
        run: targets::models::model_config,
        seeds: &[
            "tests/reference/fixtures/tiny/qwen3/config.json",
            "tests/reference/fixtures/tiny/gemma3/config.json",
            "tests/reference/fixtures/tiny/qwen3_5_moe/config.json",
            "tests/reference/fixtures/tiny/gpt_oss/config.json",
            "tests/reference/fixtures/tiny/lfm2/config.json",
            "tests/reference/fixtures/tiny/gemma4_mlx4_mixed/config.json",
        ],
    },
    Target {
        name: "model_tokenizer",
        run: targets::models::model_tokenizer,
        seeds: &[
            "tests/reference/fixtures/tiny/qwen3/tokenizer.json",
            "tests/reference/fixtures/tiny/llama/tokenizer.json",
            "tests/reference/fixtures/tiny/gemma3/tokenizer.json",
        ],
    },
    Target {
        name: "model_tokenizer_config",
        run: targets::models::model_tokenizer_config,
        seeds: &[
            "tests/reference/fixtures/tiny/qwen3/tokenizer_config.json",
            "tests/reference/fixtures/tiny/llama/tokenizer_config.json",
            "tests/reference/fixtures/tiny/gpt_oss/tokenizer_config.json",
        ],
    },
    Target {
        name: "chat_template",
        run: targets::text::chat_template,
        seeds: &[
            "tests/reference/fixtures/templates/Qwen3.5-4B.jinja",
            "tests/reference/fixtures/templates/google-gemma-4-31B-it.jinja",
            "tests/reference/fixtures/tiny/gpt_oss_harmony/chat_template.jinja",
            "tests/reference/fixtures/tiny/ministral3/chat_template.jinja",
        ],
    },
    Target { name: "reply_parser", run: targets::text::reply_parser, seeds: &[] },
    Target { name: "constraint", run: targets::text::constraint, seeds: &[] },
];

pub fn target(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// What a cargo-fuzz binary calls for each input.
///
/// libFuzzer's panic hook aborts at any panic, even one a parser catches by design (the PDF and
/// ZIP readers turn a panic in their dependencies into a "damaged file" error). The first call
/// puts the default hook back: a panic that escapes the target still aborts (libfuzzer-sys's
/// wrapper does that), one caught inside is the parser's own business.
pub fn run(name: &str, data: &[u8]) {
    static HOOK: std::sync::Once = std::sync::Once::new();
    HOOK.call_once(|| {
        let _ = std::panic::take_hook();
    });
    let target = target(name).unwrap_or_else(|| panic!("no fuzz target named {name}"));
    (target.run)(data)
}

/// The repository's root (this crate is two folders down).
pub fn repository_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The target's seeds: every file under its seed paths and its corpus folder, each once, in a
/// stable order (files over 4 MiB left out: mutations of them are slow and add little).
pub fn seeds(target: &Target) -> Vec<(PathBuf, Vec<u8>)> {
    let root = repository_root();
    let corpus = format!("fuzz/corpus/{}", target.name);
    let mut files = Vec::new();
    for seed in target.seeds.iter().copied().chain([corpus.as_str()]) {
        let path = root.join(seed);
        match path.file_name().and_then(|n| n.to_str()).and_then(|n| n.strip_prefix('*')) {
            Some(ending) => {
                let folder = path.parent().unwrap_or(&root);
                let entries = std::fs::read_dir(folder).into_iter().flatten().flatten();
                files.extend(entries.map(|e| e.path()).filter(|p| p.is_file() && p.to_string_lossy().ends_with(ending)));
            }
            None => collect_files(&path, &mut files),
        }
    }
    files.sort();
    files.dedup();
    files
        .into_iter()
        .filter_map(|path| std::fs::read(&path).ok().filter(|bytes| bytes.len() <= 4 << 20).map(|bytes| (path, bytes)))
        .collect()
}

fn collect_files(path: &Path, files: &mut Vec<PathBuf>) {
    if path.is_file() {
        files.push(path.to_path_buf());
    } else if let Ok(entries) = std::fs::read_dir(path) {
        for entry in entries.flatten() {
            collect_files(&entry.path(), files);
        }
    }
}

/// Writes `bytes` to a file named `name` in a fresh temporary folder, for the parsers that read
/// from a path; the folder goes when the guard drops.
pub fn as_file(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new().prefix("confab-fuzz").tempdir_in(scratch()).expect("a temporary folder");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("a temporary file");
    (dir, path)
}

/// Memory-backed where the system has it: fuzzing writes thousands of files a second.
fn scratch() -> PathBuf {
    let shm = Path::new("/dev/shm");
    if shm.is_dir() {
        shm.to_path_buf()
    } else {
        std::env::temp_dir()
    }
}
