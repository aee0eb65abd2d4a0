//! The folder picker's view of the disk: one folder's subfolders, and which of them hold models,
//! so a person can pick a model folder by clicking instead of typing its path. Read only.

use std::path::{Path, PathBuf};

use confab_engine::{has_gguf_name, is_model_folder};

/// A folder as the picker shows it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct FolderListing {
    /// The folder, absolute.
    pub path: PathBuf,
    /// The folder above it; `None` at the root.
    pub parent: Option<PathBuf>,
    /// Its subfolders, hidden ones (`.name`) left out, sorted by name.
    pub folders: Vec<FolderEntry>,
    /// Models directly inside it: model folders (a `config.json`) and `.gguf` files. A model
    /// folder added to the settings is searched deeper than this.
    pub models_inside: usize,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct FolderEntry {
    pub name: String,
    pub path: PathBuf,
    /// It is a model (it has a `config.json`), holds `.gguf` files or is an Ollama store.
    pub has_model: bool,
}

/// Where the picker opens when it has no folder to start from.
pub fn start_folder() -> PathBuf {
    std::env::var_os("HOME").map(PathBuf::from).filter(|h| h.is_dir()).unwrap_or_else(|| PathBuf::from("/"))
}

/// The listing of `path` (absolute; `..` and links resolved).
pub fn list(path: &Path) -> Result<FolderListing, String> {
    if !path.is_absolute() {
        return Err(format!("{} is not a full path; start it with /.", path.display()));
    }
    let path = path.canonicalize().map_err(|e| format!("Cannot open {}: {e}.", path.display()))?;
    if !path.is_dir() {
        return Err(format!("{} is a file, not a folder.", path.display()));
    }
    let entries = std::fs::read_dir(&path).map_err(|e| format!("Cannot read {}: {e}.", path.display()))?;
    let mut folders = vec![];
    let mut models_inside = 0;
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let child = entry.path();
        if is_gguf(&child) {
            models_inside += 1;
        }
        if name.starts_with('.') || !child.is_dir() {
            continue;
        }
        let is_model = is_model_folder(&child);
        models_inside += usize::from(is_model);
        let has_model = is_model || holds_gguf(&child) || confab_engine::is_ollama_store(&child);
        folders.push(FolderEntry { name, path: child, has_model });
    }
    folders.sort_by_key(|f| f.name.to_lowercase());
    Ok(FolderListing { parent: path.parent().map(Path::to_path_buf), path, folders, models_inside })
}

fn is_gguf(path: &Path) -> bool {
    has_gguf_name(path) && path.is_file()
}

fn holds_gguf(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|entries| entries.flatten().any(|e| is_gguf(&e.path())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_subfolders_and_marks_the_ones_with_models() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path();
        std::fs::create_dir_all(dir.join("smol")).unwrap();
        std::fs::write(dir.join("smol/config.json"), "{}").unwrap();
        std::fs::create_dir_all(dir.join("ggufs")).unwrap();
        std::fs::write(dir.join("ggufs/m.Q4_0.gguf"), "").unwrap();
        std::fs::create_dir_all(dir.join("Photos")).unwrap();
        std::fs::create_dir_all(dir.join("ollama/manifests")).unwrap();
        std::fs::create_dir_all(dir.join("ollama/blobs")).unwrap();
        std::fs::create_dir_all(dir.join(".hidden")).unwrap();
        std::fs::write(dir.join("loose.gguf"), "").unwrap();
        std::fs::write(dir.join("notes.txt"), "").unwrap();

        let listing = list(dir).unwrap();
        let names: Vec<(&str, bool)> = listing.folders.iter().map(|f| (f.name.as_str(), f.has_model)).collect();
        assert_eq!(names, [("ggufs", true), ("ollama", true), ("Photos", false), ("smol", true)]);
        // The model folder and the loose GGUF file; the folder of GGUFs is searched when added.
        assert_eq!(listing.models_inside, 2);
        assert_eq!(listing.parent.as_deref(), dir.canonicalize().unwrap().parent());
    }

    #[test]
    fn refuses_what_is_not_a_folder_with_a_reason() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("file"), "").unwrap();
        assert!(list(&root.path().join("file")).unwrap_err().contains("is a file"));
        assert!(list(&root.path().join("gone")).unwrap_err().starts_with("Cannot open"));
        assert!(list(Path::new("relative")).unwrap_err().contains("not a full path"));
    }

    #[test]
    fn the_root_has_no_parent() {
        assert_eq!(list(Path::new("/")).unwrap().parent, None);
    }
}
