//! The files of a cache's disk tier, shared by the prefix and encoder caches. Each entry is
//! `<id>.safetensors` beside a JSON manifest `<id>.json` that seals the data (byte count and
//! checksum). Written atomically (temporary names, then renames: the manifest last, so a
//! manifest always names complete data), verified on load, bounded by a byte budget with the
//! least recently used entry removed first (manifest mtimes order it across restarts; files
//! entries share are counted once and outlive all but the last entry that lists them). A
//! corrupt, truncated, foreign or stale entry is ignored with a warning and deleted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mlx_rs::Array;
use serde::de::DeserializeOwned;
use serde::Serialize;

/// The data file's size and CRC-32 checksum, as recorded in its manifest.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Seal {
    pub checksum: String,
    pub bytes: u64,
}

/// A cache's manifest type: serialisable, carrying its seal and format version.
pub(crate) trait Manifest: Serialize + DeserializeOwned {
    /// Whether this build can read an entry written with this manifest.
    fn current(&self) -> bool;
    fn seal(&self) -> &Seal;
    /// Files the entry may share with other entries (by name) and their sizes: the budget
    /// counts each once, and one stays while any entry that lists it stays.
    fn shared_files(&self) -> Vec<(&str, u64)> {
        vec![]
    }
}

struct Indexed<M> {
    id: String,
    manifest: M,
    last_used: SystemTime,
}

pub(crate) struct EntryDir<M> {
    dir: PathBuf,
    budget: u64,
    /// Names the cache in warnings.
    label: &'static str,
    index: Vec<Indexed<M>>,
}

pub(crate) fn checksum(bytes: &[u8]) -> String {
    checksum_of(crc32fast::hash(bytes))
}

/// A CRC-32 as manifests write it.
pub(crate) fn checksum_of(crc: u32) -> String {
    format!("{crc:08x}")
}

impl<M: Manifest> EntryDir<M> {
    /// Reads every manifest under `dir`; unreadable or outdated ones (and their data) are removed.
    pub fn open(dir: PathBuf, budget: u64, label: &'static str) -> Self {
        let _ = std::fs::create_dir_all(&dir);
        let mut index = vec![];
        let mut data_files = vec![];
        for path in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()) {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name.contains(".partial.") {
                let _ = std::fs::remove_file(&path); // an interrupted write
                continue;
            }
            let Some(id) = name.strip_suffix(".json") else {
                if let Some(id) = name.strip_suffix(".safetensors") {
                    data_files.push(id.to_string());
                }
                continue;
            };
            let id = id.to_string();
            let manifest = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<M>(&t).ok());
            match manifest {
                Some(m) if m.current() && dir.join(format!("{id}.safetensors")).is_file() => {
                    let last_used = path.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
                    index.push(Indexed { id, manifest: m, last_used });
                }
                _ => {
                    warn(label, format!("ignoring unreadable or outdated entry {name}"));
                    remove_files(&dir, &id);
                }
            }
        }
        // Data without its manifest: a write killed between its two renames, or a removal
        // killed between its two deletions. Never read (the manifest is what makes an entry),
        // but it would hold its bytes outside the budget for good.
        for id in data_files.iter().filter(|id| !index.iter().any(|e: &Indexed<M>| &e.id == *id)) {
            warn(label, format!("removing {id}.safetensors, which has no manifest"));
            let _ = std::fs::remove_file(dir.join(format!("{id}.safetensors")));
        }
        Self { dir, budget, label, index }
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    pub fn contains(&self, id: &str) -> bool {
        self.index.iter().any(|e| e.id == id)
    }

    /// Every entry's id and manifest.
    pub fn entries(&self) -> impl Iterator<Item = (&str, &M)> {
        self.index.iter().map(|e| (e.id.as_str(), &e.manifest))
    }

    /// Bytes of data on disk: each entry's own file, and each shared file once.
    pub fn bytes(&self) -> u64 {
        let mut shared = HashMap::new();
        self.index.iter().flat_map(|e| e.manifest.shared_files()).for_each(|(name, bytes)| {
            shared.insert(name, bytes);
        });
        self.index.iter().map(|e| e.manifest.seal().bytes).sum::<u64>() + shared.values().sum::<u64>()
    }

    /// Loads an entry's arrays, checks them against the seal, and lets `build` make the value
    /// (and reject it). A bad entry is deleted and `None` returned.
    pub fn load<T>(&mut self, id: &str, build: impl FnOnce(&M, HashMap<String, Array>) -> Result<T, String>) -> Option<T> {
        self.load_file(id, |manifest, path| build(manifest, read(path, manifest.seal())?))
    }

    /// Like `load`, but `build` reads the entry's data file itself (given its path) and checks
    /// it against the manifest's seal.
    pub fn load_file<T>(&mut self, id: &str, build: impl FnOnce(&M, &Path) -> Result<T, String>) -> Option<T> {
        let position = self.index.iter().position(|e| e.id == id)?;
        let manifest = &self.index[position].manifest;
        match build(manifest, &self.dir.join(format!("{id}.safetensors"))) {
            Ok(value) => {
                self.index[position].last_used = SystemTime::now();
                let _ = touch(&self.dir.join(format!("{id}.json")));
                Some(value)
            }
            Err(reason) => {
                warn(self.label, format!("ignoring entry {id}: {reason}"));
                self.remove(id);
                None
            }
        }
    }

    /// Writes an entry (replacing one with the same id), then trims the tier to its budget.
    /// A failure is a warning: the cache is an optimisation.
    pub fn store(&mut self, id: &str, arrays: &[(String, &Array)], manifest: impl FnOnce(Seal) -> M) {
        if let Err(e) = self.write(id, arrays, manifest) {
            warn(self.label, format!("could not write an entry: {e}"));
        }
        self.evict_to_budget();
    }

    fn write(&mut self, id: &str, arrays: &[(String, &Array)], manifest: impl FnOnce(Seal) -> M) -> Result<(), String> {
        let data = self.dir.join(format!("{id}.safetensors"));
        // MLX insists on the .safetensors extension, so the temporary name keeps it.
        let data_tmp = self.dir.join(format!("{id}.partial.safetensors"));
        Array::save_safetensors(arrays.iter().map(|(n, a)| (n.as_str(), *a)), None, &data_tmp).map_err(|e| e.to_string())?;
        let bytes = std::fs::read(&data_tmp).map_err(|e| e.to_string())?;
        let manifest = manifest(Seal { checksum: checksum(&bytes), bytes: bytes.len() as u64 });
        let json = self.dir.join(format!("{id}.json"));
        let json_tmp = self.dir.join(format!("{id}.partial.json"));
        std::fs::write(&json_tmp, serde_json::to_vec(&manifest).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        std::fs::rename(&data_tmp, &data).map_err(|e| e.to_string())?;
        std::fs::rename(&json_tmp, &json).map_err(|e| e.to_string())?;
        self.index.retain(|e| e.id != id);
        self.index.push(Indexed { id: id.to_string(), manifest, last_used: SystemTime::now() });
        Ok(())
    }

    pub fn remove(&mut self, id: &str) {
        remove_files(&self.dir, id);
        self.index.retain(|e| e.id != id);
    }

    /// Removes the least recently used entries until the budget holds. A shared file is
    /// freed only with the last entry that lists it, so it lives as long as its most recently
    /// used entry: least recently used per file, not per entry.
    fn evict_to_budget(&mut self) {
        while self.bytes() > self.budget && !self.index.is_empty() {
            let oldest = (0..self.index.len()).min_by_key(|&i| self.index[i].last_used).expect("non-empty");
            let entry = self.index.remove(oldest);
            remove_files(&self.dir, &entry.id);
        }
    }
}

fn read(path: &Path, seal: &Seal) -> Result<HashMap<String, Array>, String> {
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    if bytes.len() as u64 != seal.bytes || checksum(&bytes) != seal.checksum {
        return Err("the data does not match its checksum (truncated or corrupt)".into());
    }
    Array::load_safetensors(path).map_err(|e| e.to_string())
}

fn warn(label: &str, message: String) {
    tracing::warn!(cache = label, "{message}");
}

fn remove_files(dir: &Path, id: &str) {
    let _ = std::fs::remove_file(dir.join(format!("{id}.json")));
    let _ = std::fs::remove_file(dir.join(format!("{id}.safetensors")));
}

/// Marks the manifest as used now (its mtime orders the LRU across restarts).
fn touch(path: &Path) -> std::io::Result<()> {
    std::fs::File::options().append(true).open(path)?.set_modified(SystemTime::now())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Serialize, serde::Deserialize)]
    struct TestManifest {
        #[serde(flatten)]
        seal: Seal,
    }

    impl Manifest for TestManifest {
        fn current(&self) -> bool {
            true
        }

        fn seal(&self) -> &Seal {
            &self.seal
        }
    }

    fn store(dir: &mut EntryDir<TestManifest>, id: &str, value: f32) {
        let array = Array::from_slice(&[value; 64], &[64]);
        dir.store(id, &[("x".into(), &array)], |seal| TestManifest { seal });
    }

    fn load(dir: &mut EntryDir<TestManifest>, id: &str) -> Option<f32> {
        dir.load(id, |_, mut arrays| Ok(arrays.remove("x").ok_or("no x")?.as_slice::<f32>()[0]))
    }

    fn names(dir: &Path) -> Vec<String> {
        let mut names: Vec<String> =
            std::fs::read_dir(dir).unwrap().flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect();
        names.sort();
        names
    }

    /// What a write or a removal killed at each step leaves: the next open keeps the whole
    /// entries, and removes the rest (no file outside the budget for good).
    #[test]
    fn what_a_killed_write_leaves_is_removed_at_the_next_open() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dir = EntryDir::<TestManifest>::open(tmp.path().to_path_buf(), u64::MAX, "test");
        store(&mut dir, "whole", 1.0);
        store(&mut dir, "renamed", 2.0);
        drop(dir);
        // Killed before its renames: both temporaries.
        std::fs::write(tmp.path().join("early.partial.safetensors"), b"half").unwrap();
        std::fs::write(tmp.path().join("early.partial.json"), b"{").unwrap();
        // Killed between the renames: the data in place, its manifest still temporary.
        std::fs::remove_file(tmp.path().join("renamed.json")).unwrap();
        std::fs::write(tmp.path().join("renamed.partial.json"), b"{\"checksum\":").unwrap();

        let mut dir = EntryDir::<TestManifest>::open(tmp.path().to_path_buf(), u64::MAX, "test");
        assert_eq!(names(tmp.path()), ["whole.json", "whole.safetensors"]);
        assert_eq!(load(&mut dir, "whole"), Some(1.0));
        assert_eq!(load(&mut dir, "renamed"), None);
    }

    /// An entry rewritten under the same id, killed between its renames: the new data beside
    /// the old manifest does not match its seal, so it is dropped, not read as whole.
    #[test]
    fn new_data_under_an_old_manifest_is_dropped_not_read() {
        let tmp = tempfile::tempdir().unwrap();
        let mut dir = EntryDir::<TestManifest>::open(tmp.path().to_path_buf(), u64::MAX, "test");
        store(&mut dir, "entry", 1.0);
        let old_manifest = std::fs::read(tmp.path().join("entry.json")).unwrap();
        store(&mut dir, "entry", 2.0);
        std::fs::write(tmp.path().join("entry.json"), old_manifest).unwrap();
        drop(dir);

        let mut dir = EntryDir::<TestManifest>::open(tmp.path().to_path_buf(), u64::MAX, "test");
        assert!(dir.contains("entry"));
        assert_eq!(load(&mut dir, "entry"), None);
        assert!(dir.is_empty());
        assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
    }
}
