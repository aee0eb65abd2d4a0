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
    /// (and `fuzz/corpus/<name>/`, always).
    pub seeds: &'static [&'static str],
}

/// Every target; a new one is a function in `targets/` and a line here (and its three-line file
/// in `fuzz/fuzz_targets/`, which the smoke test checks).
pub const TARGETS: &[Target] = &[
    Target { name: "gguf_header", run: targets::models::gguf_header, seeds: &["tests/reference/fixtures/tiny_spm.gguf"] },
    Target { name: "document", run: targets::documents::document, seeds: &["crates/documents/tests/fixtures"] },
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
        collect_files(&root.join(seed), &mut files);
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
