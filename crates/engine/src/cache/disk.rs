//! The prefix cache's disk tier: one safetensors file of keys and values per entry, beside a
//! JSON manifest (format version, model fingerprint, tokens, media hashes, checksum). The file
//! handling (atomic writes, verification, byte budget) is `entries::EntryDir`'s.

use crate::cache::entries::{EntryDir, Seal};
use crate::cache::prefix::PrefixKey;
use crate::cache::{KvCache, LayerKv};
use crate::model::format::Fingerprint;

const FORMAT_VERSION: u32 = 1;

#[derive(serde::Serialize, serde::Deserialize)]
struct Manifest {
    format_version: u32,
    key: PrefixKey,
    layers: usize,
    #[serde(flatten)]
    seal: Seal,
}

impl crate::cache::entries::Manifest for Manifest {
    fn current(&self) -> bool {
        self.format_version == FORMAT_VERSION
    }

    fn seal(&self) -> &Seal {
        &self.seal
    }
}

pub struct DiskTier {
    entries: EntryDir<Manifest>,
}

impl DiskTier {
    /// Reads every manifest under `dir`; unreadable ones (and their data) are removed.
    pub fn open(dir: std::path::PathBuf, budget: u64) -> Self {
        Self { entries: EntryDir::open(dir, budget, "prefix cache") }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entry sharing the longest prefix with `key` (at most `limit`), and its length.
    pub fn best_match(&self, key: &PrefixKey, limit: usize) -> Option<(usize, String)> {
        self.entries
            .entries()
            .map(|(id, m)| (m.key.shared_len(key).min(limit), id.to_string()))
            .filter(|(n, _)| *n > 0)
            .max_by_key(|(n, _)| *n)
    }

    /// Loads and verifies an entry; a bad one is deleted and `None` returned.
    pub fn load(&mut self, id: &str, fingerprint: &str) -> Option<KvCache> {
        self.entries.load(id, |manifest, mut arrays| {
            if manifest.key.fingerprint != fingerprint {
                return Err("it belongs to another model".into());
            }
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
        })
    }

    /// Writes an entry, then trims the tier to its budget.
    pub fn store(&mut self, key: &PrefixKey, cache: &KvCache) {
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
            let Some((k, v)) = layer.valid() else {
                eprintln!("confab: prefix cache: could not write an entry: an empty layer");
                return;
            };
            arrays.push((format!("layer.{i}.keys"), k));
            arrays.push((format!("layer.{i}.values"), v));
        }
        let refs: Vec<(String, &mlx_rs::Array)> = arrays.iter().map(|(n, a)| (n.clone(), a)).collect();
        let layers = cache.layers.len();
        self.entries.store(&id, &refs, |seal| Manifest {
            format_version: FORMAT_VERSION,
            key: key.clone(),
            layers,
            seal,
        });
    }
}
