//! Where Confab keeps its files, and the default model.
//!
//! One convention for every client (CLI, app, setup script): `$CONFAB_HOME` when set (tests,
//! portable installs), otherwise the platform's data and cache folders.

use std::path::{Path, PathBuf};

#[derive(Debug, Clone, serde::Serialize)]
pub struct AppPaths {
    /// The SQLite file, attachments, settings.
    pub data_dir: PathBuf,
    /// The app's own models folder; setup puts the default model here.
    pub models_dir: PathBuf,
    /// Prefix (KV) and encoder caches.
    pub cache_dir: PathBuf,
}

impl AppPaths {
    pub fn from_env() -> Self {
        if let Some(home) = std::env::var_os("CONFAB_HOME").filter(|v| !v.is_empty()) {
            return Self::under(Path::new(&home));
        }
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| ".".into());
        let (data, cache) = platform_dirs(&home);
        Self { models_dir: data.join("models"), data_dir: data, cache_dir: cache }
    }

    /// Everything in one folder.
    pub fn under(root: &Path) -> Self {
        Self {
            data_dir: root.to_path_buf(),
            models_dir: root.join("models"),
            cache_dir: root.join("cache"),
        }
    }

    /// The app's log files (see `confab_log`).
    pub fn logs_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    /// Folders other apps keep models in, that exist on this machine.
    pub fn other_model_folders(&self) -> Vec<PathBuf> {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else { return vec![] };
        let hf_hub = std::env::var_os("HF_HUB_CACHE")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HF_HOME").map(|h| PathBuf::from(h).join("hub")))
            .unwrap_or_else(|| home.join(".cache/huggingface/hub"));
        [hf_hub, home.join(".lmstudio/models"), home.join(".cache/lm-studio/models")]
            .into_iter()
            .filter(|p| p.is_dir())
            .collect()
    }
}

#[cfg(target_os = "macos")]
fn platform_dirs(home: &Path) -> (PathBuf, PathBuf) {
    (home.join("Library/Application Support/Confab"), home.join("Library/Caches/Confab"))
}

#[cfg(not(target_os = "macos"))]
fn platform_dirs(home: &Path) -> (PathBuf, PathBuf) {
    let xdg = |var: &str, fallback: &str| {
        std::env::var_os(var)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(fallback))
    };
    (xdg("XDG_DATA_HOME", ".local/share").join("confab"), xdg("XDG_CACHE_HOME", ".cache").join("confab"))
}

/// The model the app opens with, as described by `assets/default-model.json`.
#[derive(Debug, Clone, serde::Deserialize, serde::Serialize)]
pub struct DefaultModel {
    pub name: String,
    pub folder: String,
    pub file: String,
    pub pypi_package: String,
    pub pypi_version: String,
    pub sha256: String,
    pub size_bytes: u64,
}

impl DefaultModel {
    pub fn manifest() -> Self {
        serde_json::from_str(include_str!("../../../assets/default-model.json"))
            .expect("assets/default-model.json is valid")
    }

    /// Where setup places the model file.
    pub fn path(&self, paths: &AppPaths) -> PathBuf {
        paths.models_dir.join(&self.folder).join(&self.file)
    }

    /// Whether setup has placed the model: the file is there with the manifest's size.
    pub fn is_present(&self, paths: &AppPaths) -> bool {
        self.path(paths).metadata().is_ok_and(|m| m.len() == self.size_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn confab_home_holds_everything() {
        let paths = AppPaths::under(Path::new("/tmp/x"));
        assert_eq!(paths.models_dir, Path::new("/tmp/x/models"));
        let model = DefaultModel::manifest();
        assert_eq!(model.path(&paths), Path::new("/tmp/x/models/SmolLM2-135M-Instruct/SmolLM2-135M-Instruct.Q4_1.gguf"));
        assert!(!model.is_present(&AppPaths::under(Path::new("/nonexistent/confab"))));
    }
}
