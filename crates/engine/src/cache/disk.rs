//! The prefix cache's disk tier: one safetensors file of keys and values per entry, beside a
//! JSON manifest (format version, model fingerprint, tokens, media hashes, checksum). Written
//! atomically, verified on load, bounded by a byte budget (least recently used removed first).
//! A corrupt, truncated, foreign or stale entry is ignored with a warning and deleted.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use mlx_rs::Array;

use crate::cache::prefix::PrefixKey;
use crate::cache::{KvCache, LayerKv};
use crate::model::format::Fingerprint;

const FORMAT_VERSION: u32 = 1;

#[derive(serde::Serialize, serde::Deserialize)]
struct Manifest {
    format_version: u32,
    key: PrefixKey,
    layers: usize,
    /// FNV-1a 64 over the safetensors file's bytes.
    checksum: String,
    bytes: u64,
}

struct Indexed {
    id: String,
    manifest: Manifest,
    last_used: SystemTime,
}

pub struct DiskTier {
    dir: PathBuf,
    budget: u64,
    index: Vec<Indexed>,
}

fn warn(message: String) {
    eprintln!("confab: prefix cache: {message}");
}

fn checksum(bytes: &[u8]) -> String {
    Fingerprint::new().add(bytes).finish()
}

impl DiskTier {
    /// Reads every manifest under `dir`; unreadable ones (and their data) are removed.
    pub fn open(dir: PathBuf, budget: u64) -> Self {
        let _ = std::fs::create_dir_all(&dir);
        let mut index = vec![];
        for path in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()) {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if name.contains(".partial.") {
                let _ = std::fs::remove_file(&path); // an interrupted write
                continue;
            }
            let Some(id) = name.strip_suffix(".json") else { continue };
            let id = id.to_string();
            let manifest = std::fs::read_to_string(&path).ok().and_then(|t| serde_json::from_str::<Manifest>(&t).ok());
            match manifest {
                Some(m) if m.format_version == FORMAT_VERSION && dir.join(format!("{id}.safetensors")).is_file() => {
                    let last_used = path.metadata().and_then(|m| m.modified()).unwrap_or(SystemTime::UNIX_EPOCH);
                    index.push(Indexed { id, manifest: m, last_used });
                }
                _ => {
                    warn(format!("ignoring unreadable or outdated entry {name}"));
                    remove_files(&dir, &id);
                }
            }
        }
        Self { dir, budget, index }
    }

    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }

    /// The entry sharing the longest prefix with `key` (at most `limit`), and its length.
    pub fn best_match(&self, key: &PrefixKey, limit: usize) -> Option<(usize, String)> {
        self.index
            .iter()
            .map(|e| (e.manifest.key.shared_len(key).min(limit), e.id.clone()))
            .filter(|(n, _)| *n > 0)
            .max_by_key(|(n, _)| *n)
    }

    /// Loads and verifies an entry; a bad one is deleted and `None` returned.
    pub fn load(&mut self, id: &str, fingerprint: &str) -> Option<KvCache> {
        let position = self.index.iter().position(|e| e.id == id)?;
        match self.read(&self.index[position].manifest, id, fingerprint) {
            Ok(cache) => {
                self.index[position].last_used = SystemTime::now();
                let _ = filetime_touch(&self.dir.join(format!("{id}.json")));
                Some(cache)
            }
            Err(reason) => {
                warn(format!("ignoring entry {id}: {reason}"));
                remove_files(&self.dir, id);
                self.index.remove(position);
                None
            }
        }
    }

    fn read(&self, manifest: &Manifest, id: &str, fingerprint: &str) -> Result<KvCache, String> {
        if manifest.key.fingerprint != fingerprint {
            return Err("it belongs to another model".into());
        }
        let path = self.dir.join(format!("{id}.safetensors"));
        let bytes = std::fs::read(&path).map_err(|e| e.to_string())?;
        if bytes.len() as u64 != manifest.bytes || checksum(&bytes) != manifest.checksum {
            return Err("the data does not match its checksum (truncated or corrupt)".into());
        }
        let arrays = Array::load_safetensors(&path).map_err(|e| e.to_string())?;
        let mut arrays: HashMap<String, Array> = arrays;
        let tokens = manifest.key.tokens.len() as i32;
        let mut layers = Vec::with_capacity(manifest.layers);
        for i in 0..manifest.layers {
            let keys = arrays.remove(&format!("layer.{i}.keys")).ok_or("a layer is missing")?;
            let values = arrays.remove(&format!("layer.{i}.values")).ok_or("a layer is missing")?;
            if keys.dim(2) != tokens || values.dim(2) != tokens {
                return Err("its length disagrees with its tokens".into());
            }
            layers.push(LayerKv::from_arrays(keys, values));
        }
        Ok(KvCache { layers })
    }

    /// Writes an entry (temporary files, then renames: the manifest last, so a manifest always
    /// names complete data), then trims the tier to its budget.
    pub fn store(&mut self, key: &PrefixKey, cache: &KvCache) {
        if let Err(e) = self.write(key, cache) {
            warn(format!("could not write an entry: {e}"));
        }
        self.evict_to_budget();
    }

    fn write(&mut self, key: &PrefixKey, cache: &KvCache) -> Result<(), String> {
        let mut id_hash = Fingerprint::new();
        id_hash.add(key.fingerprint.as_bytes());
        key.tokens.iter().for_each(|t| {
            id_hash.add(&t.to_le_bytes());
        });
        key.media.iter().for_each(|m| {
            id_hash.add(m.hash.as_bytes());
        });
        let id = id_hash.finish();
        let mut arrays = vec![];
        for (i, layer) in cache.layers.iter().enumerate() {
            let (k, v) = layer.valid().ok_or("an empty layer")?;
            arrays.push((format!("layer.{i}.keys"), k));
            arrays.push((format!("layer.{i}.values"), v));
        }
        let data = self.dir.join(format!("{id}.safetensors"));
        // MLX insists on the .safetensors extension, so the temporary name keeps it.
        let data_tmp = self.dir.join(format!("{id}.partial.safetensors"));
        Array::save_safetensors(arrays.iter().map(|(n, a)| (n.as_str(), a)), None, &data_tmp).map_err(|e| e.to_string())?;
        let bytes = std::fs::read(&data_tmp).map_err(|e| e.to_string())?;
        let manifest = Manifest {
            format_version: FORMAT_VERSION,
            key: key.clone(),
            layers: cache.layers.len(),
            checksum: checksum(&bytes),
            bytes: bytes.len() as u64,
        };
        let json = self.dir.join(format!("{id}.json"));
        let json_tmp = self.dir.join(format!("{id}.partial.json"));
        std::fs::write(&json_tmp, serde_json::to_vec(&manifest).map_err(|e| e.to_string())?).map_err(|e| e.to_string())?;
        std::fs::rename(&data_tmp, &data).map_err(|e| e.to_string())?;
        std::fs::rename(&json_tmp, &json).map_err(|e| e.to_string())?;
        self.index.retain(|e| e.id != id);
        self.index.push(Indexed { id, manifest, last_used: SystemTime::now() });
        Ok(())
    }

    fn evict_to_budget(&mut self) {
        while self.index.iter().map(|e| e.manifest.bytes).sum::<u64>() > self.budget && !self.index.is_empty() {
            let oldest = (0..self.index.len()).min_by_key(|&i| self.index[i].last_used).expect("non-empty");
            let entry = self.index.remove(oldest);
            remove_files(&self.dir, &entry.id);
        }
    }
}

fn remove_files(dir: &Path, id: &str) {
    let _ = std::fs::remove_file(dir.join(format!("{id}.json")));
    let _ = std::fs::remove_file(dir.join(format!("{id}.safetensors")));
}

/// Marks the manifest as used now (its mtime orders the LRU across restarts).
fn filetime_touch(path: &Path) -> std::io::Result<()> {
    std::fs::File::options().append(true).open(path)?.set_modified(SystemTime::now())
}
