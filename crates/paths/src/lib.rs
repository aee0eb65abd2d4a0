//! Where Confab keeps its files, and the default model.
//!
//! One convention for every client (CLI, app, setup script): `$CONFAB_HOME` when set (tests,
//! portable installs), otherwise the platform's data and cache folders.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct AppPaths {
    /// The SQLite file, attachments, settings.
    pub data_dir: PathBuf,
    /// The app's own models folder; the default model is installed here (by setup in a source
    /// checkout, by the app itself from its package on first launch).
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

    /// The platform's cache folder for facts about this machine rather than one user's data
    /// (the BLAS probe's answer, `blas`): never under `$CONFAB_HOME`, so that each fresh home
    /// (every test, a portable install) does not measure the machine again.
    pub fn machine_cache_dir() -> PathBuf {
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| ".".into());
        platform_dirs(&home).1
    }

    /// Everything in one folder.
    pub fn under(root: &Path) -> Self {
        Self { data_dir: root.to_path_buf(), models_dir: root.join("models"), cache_dir: root.join("cache") }
    }

    /// The history database (conversations, settings, the local server's kept responses),
    /// shared by the app and `confab serve`.
    pub fn database(&self) -> PathBuf {
        self.data_dir.join("confab.db")
    }

    /// The app's log files (see `confab_log`).
    pub fn logs_dir(&self) -> PathBuf {
        self.data_dir.join("logs")
    }

    /// Folders other apps keep models in, that exist on this machine: the Hugging Face cache,
    /// LM Studio's folders and Ollama's stores.
    pub fn other_model_folders(&self) -> Vec<PathBuf> {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else { return vec![] };
        let mut folders = vec![Self::hf_hub_cache(), home.join(".lmstudio/models"), home.join(".cache/lm-studio/models")];
        folders.extend(Self::ollama_stores(&home));
        folders.into_iter().filter(|p| p.is_dir()).collect()
    }
}

impl AppPaths {
    /// Where Ollama keeps its models: `OLLAMA_MODELS` when set, else `~/.ollama/models`, and
    /// the store of Ollama's Linux service (which runs as its own user).
    fn ollama_stores(home: &Path) -> Vec<PathBuf> {
        let own = std::env::var_os("OLLAMA_MODELS").filter(|v| !v.is_empty()).map(PathBuf::from);
        vec![own.unwrap_or_else(|| home.join(".ollama/models")), PathBuf::from("/usr/share/ollama/.ollama/models")]
    }

    /// The Hugging Face cache, where downloads from the hub land (shared with mlx-lm and
    /// transformers): `HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`.
    pub fn hf_hub_cache() -> PathBuf {
        let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        var("HF_HUB_CACHE")
            .or_else(|| var("HF_HOME").map(|h| h.join("hub")))
            .unwrap_or_else(|| var("HOME").unwrap_or_else(|| ".".into()).join(".cache/huggingface/hub"))
    }
}

/// Folders an installed Confab carries models in, found beside its binary: the Linux package's
/// `/usr/share/confab/models` (binary in `/usr/bin`) and the macOS app's
/// `Contents/Resources/models` (binary in `Contents/MacOS`). Only those that exist.
pub fn packaged_model_folders() -> Vec<PathBuf> {
    let Some(bin_dir) = std::env::current_exe().ok().and_then(|exe| exe.parent().map(Path::to_path_buf)) else {
        return vec![];
    };
    [bin_dir.join("../share/confab/models"), bin_dir.join("../Resources/models")].into_iter().filter(|p| p.is_dir()).collect()
}

#[cfg(target_os = "macos")]
fn platform_dirs(home: &Path) -> (PathBuf, PathBuf) {
    (home.join("Library/Application Support/Confab"), home.join("Library/Caches/Confab"))
}

#[cfg(not(target_os = "macos"))]
fn platform_dirs(home: &Path) -> (PathBuf, PathBuf) {
    let xdg = |var: &str, fallback: &str| {
        std::env::var_os(var).filter(|v| !v.is_empty()).map(PathBuf::from).unwrap_or_else(|| home.join(fallback))
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
        serde_json::from_str(include_str!("../../../assets/default-model.json")).expect("assets/default-model.json is valid")
    }

    /// Where setup places the model file.
    pub fn path(&self, paths: &AppPaths) -> PathBuf {
        paths.models_dir.join(&self.folder).join(&self.file)
    }

    /// Whether the model is installed: the file is there with the manifest's size (the
    /// SHA-256 was checked when it was placed).
    pub fn is_present(&self, paths: &AppPaths) -> bool {
        self.path(paths).metadata().is_ok_and(|m| m.len() == self.size_bytes)
    }

    /// The copy an installed Confab carries in one of `packaged` (see
    /// [`packaged_model_folders`]), if one has the manifest's size.
    pub fn packaged_copy(&self, packaged: &[PathBuf]) -> Option<PathBuf> {
        packaged
            .iter()
            .map(|folder| folder.join(&self.folder).join(&self.file))
            .find(|p| p.metadata().is_ok_and(|m| m.len() == self.size_bytes))
    }

    /// First run: installs the model into the models folder from the copy the package carries
    /// (checked against the manifest's SHA-256 while copying; a partial file never takes the
    /// final name). Returns the installed path; does nothing when it is already there.
    pub fn install_from_package(&self, paths: &AppPaths, packaged: &[PathBuf]) -> Result<PathBuf, DefaultModelError> {
        let target = self.path(paths);
        if self.is_present(paths) {
            return Ok(target);
        }
        let source = self
            .packaged_copy(packaged)
            .ok_or_else(|| DefaultModelError::NotPackaged { name: self.name.clone(), models_dir: paths.models_dir.clone() })?;
        let io = |e: std::io::Error| DefaultModelError::Io { target: target.clone(), reason: e.to_string() };
        std::fs::create_dir_all(target.parent().unwrap_or(&paths.models_dir)).map_err(io)?;
        let partial = target.with_extension("gguf.partial");
        let copied = copy_hashing(&source, &partial);
        let sha256 = match copied {
            Ok(sha256) => sha256,
            Err(e) => {
                let _ = std::fs::remove_file(&partial);
                return Err(io(e));
            }
        };
        if sha256 != self.sha256 {
            let _ = std::fs::remove_file(&partial);
            return Err(DefaultModelError::Checksum { packaged: source, expected: self.sha256.clone(), actual: sha256 });
        }
        std::fs::rename(&partial, &target).map_err(io)?;
        Ok(target)
    }
}

/// Copies `from` to `to`, flushed to disk, and returns the SHA-256 (hex) of what was copied.
fn copy_hashing(from: &Path, to: &Path) -> std::io::Result<String> {
    let mut input = std::fs::File::open(from)?;
    let mut output = std::fs::File::create(to)?;
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 1 << 20];
    loop {
        let n = input.read(&mut buffer)?;
        if n == 0 {
            break;
        }
        hasher.update(&buffer[..n]);
        output.write_all(&buffer[..n])?;
    }
    output.sync_all()?;
    Ok(hex(&hasher.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Why the default model could not be installed on first run.
#[derive(Debug, thiserror::Error)]
pub enum DefaultModelError {
    #[error("The default model ({name}) is not in {models_dir} and this copy of Confab carries none. Pick another model, or add a folder with models.")]
    NotPackaged { name: String, models_dir: PathBuf },

    #[error(
        "The default model in {packaged} is damaged (SHA-256 {actual}, expected {expected}). Reinstall Confab, or pick another model."
    )]
    Checksum { packaged: PathBuf, expected: String, actual: String },

    #[error(
        "Could not install the default model into {target}: {reason}. Free some disk space (it needs about 100 MB) and start Confab again."
    )]
    Io { target: PathBuf, reason: String },
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

    #[test]
    fn nothing_packaged_says_what_to_do_instead() {
        let home = tempfile::tempdir().unwrap();
        let paths = AppPaths::under(home.path());
        let err = DefaultModel::manifest().install_from_package(&paths, &[home.path().join("share")]).unwrap_err();
        assert!(matches!(err, DefaultModelError::NotPackaged { .. }), "{err}");
        // What to do instead, in neutral words (the app names its model menu: src-tauri's failure.rs).
        assert!(err.to_string().contains("Pick another model") && !err.to_string().contains(".sh"), "{err}");
    }

    #[test]
    fn a_damaged_packaged_copy_is_refused_and_leaves_nothing() {
        // A file of the right size but the wrong bytes: caught by the SHA-256, not installed.
        let home = tempfile::tempdir().unwrap();
        let paths = AppPaths::under(&home.path().join("data"));
        let model = DefaultModel { size_bytes: 1000, ..DefaultModel::manifest() };
        let share = home.path().join("share");
        std::fs::create_dir_all(share.join(&model.folder)).unwrap();
        std::fs::write(share.join(&model.folder).join(&model.file), vec![7u8; 1000]).unwrap();
        let err = model.install_from_package(&paths, std::slice::from_ref(&share)).unwrap_err();
        assert!(matches!(err, DefaultModelError::Checksum { .. }), "{err}");
        let folder = paths.models_dir.join(&model.folder);
        assert_eq!(std::fs::read_dir(&folder).unwrap().count(), 0, "no partial or final file left");

        // The same bytes with their own hash in the manifest: installed, and found installed.
        let good = DefaultModel { sha256: hex(&Sha256::digest(vec![7u8; 1000])), ..model };
        let installed = good.install_from_package(&paths, &[share]).unwrap();
        assert_eq!(installed, good.path(&paths));
        assert!(good.is_present(&paths));
    }
}
