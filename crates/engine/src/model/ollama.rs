//! Ollama's model store, read in place: `manifests/<host>/<namespace>/<model>/<tag>` are JSON
//! manifests whose `image.model` layer names a GGUF blob, kept as `blobs/sha256-<hex>` (no
//! `.gguf` extension). Other layers (Ollama's Go chat template, parameters, a vision projector)
//! are not used: the GGUF's own chat template is what the engine applies.

use std::path::{Path, PathBuf};

/// The registry Ollama pulls from unless a name says another host.
const DEFAULT_HOST: &str = "registry.ollama.ai";
/// The namespace of Ollama's own models, left out of their names.
const DEFAULT_NAMESPACE: &str = "library";
const MODEL_LAYER: &str = "application/vnd.ollama.image.model";

/// One model of the store: the name Ollama shows (`llama3.2:3b`) and its GGUF blob.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OllamaModel {
    pub name: String,
    pub blob: PathBuf,
}

/// Why a manifest was passed over.
#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read it: {0}")]
    Unreadable(#[from] std::io::Error),
    #[error("not a manifest: {0}")]
    Malformed(#[from] serde_json::Error),
    #[error("it has no model layer")]
    NoModelLayer,
    #[error("its model layer's digest {0} is not sha256:<hex>")]
    BadDigest(String),
    #[error("its model blob {} is missing", .0.display())]
    MissingBlob(PathBuf),
}

#[derive(serde::Deserialize)]
struct Manifest {
    layers: Vec<Layer>,
}

#[derive(serde::Deserialize)]
struct Layer {
    #[serde(rename = "mediaType")]
    media_type: String,
    digest: String,
}

/// Whether `dir` is laid out as an Ollama store.
pub fn is_store(dir: &Path) -> bool {
    dir.join("manifests").is_dir() && dir.join("blobs").is_dir()
}

/// Every model in the store at `root`, sorted by name; several names for one blob (tags of
/// one model) give the first name. A manifest that cannot be used is logged and passed over.
pub fn models(root: &Path) -> Vec<OllamaModel> {
    let mut found: Vec<OllamaModel> = vec![];
    for (name, manifest) in manifests(root) {
        match model_blob(root, &manifest) {
            Ok(blob) => found.push(OllamaModel { name, blob }),
            Err(e) => tracing::warn!(manifest = %manifest.display(), "skipping the Ollama model {name}: {e}"),
        }
    }
    found.sort_by(|a, b| a.name.cmp(&b.name));
    let mut seen = std::collections::HashSet::new();
    found.retain(|m| seen.insert(m.blob.clone()));
    found
}

/// The name of the model whose blob is `blob`, when it lies in an Ollama store.
pub fn name_of_blob(blob: &Path) -> Option<String> {
    let root = blob.parent().filter(|p| p.file_name().is_some_and(|n| n == "blobs"))?.parent()?;
    if !is_store(root) {
        return None;
    }
    models(root).into_iter().find(|m| m.blob == blob).map(|m| m.name)
}

/// Each manifest file with the model name its place gives: `manifests/host/namespace/model/tag`.
fn manifests(root: &Path) -> Vec<(String, PathBuf)> {
    let mut found = vec![];
    let mut walk = vec![(root.join("manifests"), vec![])];
    while let Some((dir, parts)) = walk.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let mut parts: Vec<String> = parts.clone();
            parts.push(entry.file_name().to_string_lossy().into_owned());
            match (parts.len(), path.is_dir()) {
                (1..=3, true) => walk.push((path, parts)),
                (4, false) => found.push((model_name(&parts[0], &parts[1], &parts[2], &parts[3]), path)),
                _ => {}
            }
        }
    }
    found
}

/// The name as Ollama writes it: `model:tag`, under a namespace other than its own library
/// (`user/model:tag`), under a host other than its registry (`hf.co/user/repo:tag`).
fn model_name(host: &str, namespace: &str, model: &str, tag: &str) -> String {
    match (host, namespace) {
        (DEFAULT_HOST, DEFAULT_NAMESPACE) => format!("{model}:{tag}"),
        (DEFAULT_HOST, _) => format!("{namespace}/{model}:{tag}"),
        _ => format!("{host}/{namespace}/{model}:{tag}"),
    }
}

/// The GGUF blob a manifest's model layer names.
fn model_blob(root: &Path, manifest: &Path) -> Result<PathBuf, ManifestError> {
    let manifest: Manifest = serde_json::from_str(&std::fs::read_to_string(manifest)?)?;
    let layer = manifest.layers.iter().find(|l| l.media_type == MODEL_LAYER).ok_or(ManifestError::NoModelLayer)?;
    // Only hex digits: a digest never makes a path outside the blobs folder.
    let hex = layer
        .digest
        .strip_prefix("sha256:")
        .filter(|h| !h.is_empty() && h.bytes().all(|b| b.is_ascii_hexdigit()))
        .ok_or_else(|| ManifestError::BadDigest(layer.digest.clone()))?;
    let blob = root.join("blobs").join(format!("sha256-{hex}"));
    if !blob.is_file() {
        return Err(ManifestError::MissingBlob(blob));
    }
    Ok(blob)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_say_the_host_and_namespace_only_when_they_are_not_ollamas_own() {
        assert_eq!(model_name("registry.ollama.ai", "library", "llama3.2", "3b"), "llama3.2:3b");
        assert_eq!(model_name("registry.ollama.ai", "someone", "tiny", "latest"), "someone/tiny:latest");
        assert_eq!(model_name("hf.co", "user", "repo", "Q4_K_M"), "hf.co/user/repo:Q4_K_M");
    }
}
