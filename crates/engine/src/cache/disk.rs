//! The prefix cache's disk tier: one safetensors file per entry holding its layers' state and
//! its checkpoints, beside a JSON manifest (format version, model fingerprint, tokens, media
//! hashes, each layer's kind, the checkpoints' positions, checksum). The file handling (atomic
//! writes, verification, byte budget) is `entries::EntryDir`'s.
//!
//! Full keys/values go in blocks: every full 256-position page (`state::PAGE`) of all such
//! layers is a file of its own under `blocks/`, named by the hash of the token prefix it ends
//! (with the model's fingerprint and the media before its end), so entries that share a prefix
//! (a regenerate, an edit) share its block files. The manifest lists its blocks with each one's
//! size and CRC-32; the entry's own file holds only the positions past the last block. A block
//! that does not match its checksum (corrupt, truncated) is deleted with every entry that needs
//! it, never read; blocks no entry lists are deleted.

use std::collections::HashMap;

use std::path::{Path, PathBuf};

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::Array;

use crate::cache::entries::{checksum, EntryDir, Seal};
use crate::cache::key::{resume_point, PrefixKey};
use crate::model::format::Fingerprint;
use crate::state::{Checkpoint, LayerState, PositionShift, SequenceState, StateKind, PAGE};

/// 2: per-layer state kinds and checkpoints (version 1 held keys and values only).
/// 3: CRC-32 checksums (2's FNV-1a went a byte at a time, one dependent multiply per byte).
/// 4: full keys/values in shared block files.
const FORMAT_VERSION: u32 = 4;

#[derive(serde::Serialize, serde::Deserialize)]
struct Manifest {
    format_version: u32,
    key: PrefixKey,
    /// Each layer's kind, in order.
    kinds: Vec<StateKind>,
    /// Each checkpoint's position and the layers it holds.
    checkpoints: Vec<SavedCheckpoint>,
    /// Where the sequence's positions run ahead of its indices (absent: nowhere).
    #[serde(default)]
    position_shifts: Vec<PositionShift>,
    /// The blocks holding the full keys/values layers' first `blocks.len() * PAGE` positions.
    #[serde(default)]
    blocks: Vec<BlockRef>,
    #[serde(flatten)]
    seal: Seal,
}

#[derive(Clone, serde::Serialize, serde::Deserialize)]
struct BlockRef {
    id: String,
    #[serde(flatten)]
    seal: Seal,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct SavedCheckpoint {
    len: usize,
    layers: Vec<usize>,
}

impl crate::cache::entries::Manifest for Manifest {
    fn current(&self) -> bool {
        self.format_version == FORMAT_VERSION
    }

    fn seal(&self) -> &Seal {
        &self.seal
    }

    /// Its blocks, which entries sharing a prefix share: counted once in the budget, and
    /// kept while any entry lists them.
    fn shared_files(&self) -> Vec<(&str, u64)> {
        self.blocks.iter().map(|b| (b.id.as_str(), b.seal.bytes)).collect()
    }
}

impl Manifest {
    fn resume_point(&self, shared: usize) -> (usize, Option<usize>) {
        let trimmable = self.kinds.iter().all(|k| k.trimmable());
        let positions: Vec<usize> = self.checkpoints.iter().map(|c| c.len).collect();
        resume_point(trimmable, self.key.tokens.len(), &positions, shared)
    }
}

/// The disk entry that serves a request best.
pub struct DiskMatch {
    pub id: String,
    /// Where the request resumes.
    pub at: usize,
    pub checkpoint: Option<usize>,
    pub shared: usize,
}

pub struct DiskTier {
    entries: EntryDir<Manifest>,
    /// Where the blocks are.
    blocks: PathBuf,
}

impl DiskTier {
    /// Reads every manifest under `dir`; unreadable ones (and their data) are removed, and so
    /// are blocks no entry lists.
    pub fn open(dir: PathBuf, budget: u64) -> Self {
        let blocks = dir.join("blocks");
        let _ = std::fs::create_dir_all(&blocks);
        let tier = Self { entries: EntryDir::open(dir, budget, "prefix cache"), blocks };
        tier.remove_unlisted_blocks();
        tier
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Bytes on disk, each shared block once.
    pub fn bytes(&self) -> u64 {
        self.entries.bytes()
    }

    /// The entry a request can resume furthest into; `shared_with` gives the usable shared
    /// length with an entry's key.
    pub fn best_match(&self, key: &PrefixKey, shared_with: &dyn Fn(&PrefixKey) -> usize) -> Option<DiskMatch> {
        self.entries
            .entries()
            .filter(|(_, m)| m.key.fingerprint == key.fingerprint)
            .map(|(id, m)| {
                let shared = shared_with(&m.key);
                let (at, checkpoint) = m.resume_point(shared);
                DiskMatch { id: id.to_string(), at, checkpoint, shared }
            })
            .filter(|m| m.at > 0)
            .max_by_key(|m| m.at)
    }

    /// Loads and verifies an entry; a bad one is deleted and `None` returned.
    pub fn load(&mut self, id: &str, fingerprint: &str) -> Option<(SequenceState, Vec<Checkpoint>)> {
        let started = std::time::Instant::now();
        let blocks = self.blocks.clone();
        let bytes = self
            .entries
            .entries()
            .find(|(e, _)| *e == id)
            .map_or(0, |(_, m)| m.seal.bytes + m.blocks.iter().map(|b| b.seal.bytes).sum::<u64>());
        let loaded = self.entries.load(id, |manifest, mut arrays| {
            if manifest.key.fingerprint != fingerprint {
                return Err("it belongs to another model".into());
            }
            let len = manifest.key.tokens.len();
            join_blocks(&blocks, manifest, &mut arrays)?;
            let layers = layers_from(&manifest.kinds, "layer", (0..manifest.kinds.len()).collect(), &mut arrays, len)?;
            let mut checkpoints = Vec::with_capacity(manifest.checkpoints.len());
            for (c, saved) in manifest.checkpoints.iter().enumerate() {
                let held = layers_from(&manifest.kinds, &format!("checkpoint.{c}.layer"), saved.layers.clone(), &mut arrays, saved.len)?;
                checkpoints.push(Checkpoint { len: saved.len, layers: saved.layers.iter().copied().zip(held).collect() });
            }
            Ok((SequenceState::from_parts(layers, manifest.position_shifts.clone()), checkpoints))
        });
        match &loaded {
            Some(_) => {
                tracing::debug!(entry = id, bytes, load_ms = started.elapsed().as_secs_f64() * 1e3, "prefix cache read an entry from disk")
            }
            None => self.remove_unlisted_blocks(),
        }
        loaded
    }

    /// Deletes the block files no entry lists (their entries were evicted or found damaged).
    fn remove_unlisted_blocks(&self) {
        let listed: std::collections::HashSet<&str> =
            self.entries.entries().flat_map(|(_, m)| m.blocks.iter().map(|b| b.id.as_str())).collect();
        for path in std::fs::read_dir(&self.blocks).into_iter().flatten().flatten().map(|e| e.path()) {
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if !name.strip_suffix(".safetensors").is_some_and(|id| listed.contains(id)) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// Writes the full keys/values layers' block `index` (positions `index * PAGE` to the
    /// next page) unless a block of the same prefix is already on disk; returns its reference.
    fn store_block(&self, key: &PrefixKey, state: &SequenceState, index: usize) -> Result<BlockRef, String> {
        let end = (index + 1) * PAGE;
        let id = prefix_id(&PrefixKey {
            fingerprint: key.fingerprint.clone(),
            tokens: key.tokens[..end].to_vec(),
            media: key.media.iter().filter(|m| m.position < end).cloned().collect(),
        });
        let path = self.blocks.join(format!("{id}.safetensors"));
        let known = self.entries.entries().flat_map(|(_, m)| &m.blocks).find(|b| b.id == id);
        if let Some(known) = known.filter(|_| path.is_file()) {
            return Ok(known.clone());
        }
        let mut arrays = vec![];
        for (i, layer) in state.layers.iter().enumerate() {
            if let LayerState::KeysValues(kv) = layer {
                let (k, v) = kv.valid().ok_or("a keys/values layer holds nothing")?;
                let page = |a: &Array| a.index((.., .., (end - PAGE) as i32..end as i32, ..));
                arrays.push((format!("layer.{i}.keys"), page(&k)));
                arrays.push((format!("layer.{i}.values"), page(&v)));
            }
        }
        // MLX insists on the .safetensors extension, so the temporary name keeps it.
        let partial = self.blocks.join(format!("{id}.partial.safetensors"));
        Array::save_safetensors(arrays.iter().map(|(n, a)| (n.as_str(), a)), None, &partial).map_err(|e| e.to_string())?;
        let bytes = std::fs::read(&partial).map_err(|e| e.to_string())?;
        std::fs::rename(&partial, &path).map_err(|e| e.to_string())?;
        Ok(BlockRef { id, seal: Seal { checksum: checksum(&bytes), bytes: bytes.len() as u64 } })
    }

    /// Writes an entry, then trims the tier to its budget.
    pub fn store(&mut self, key: &PrefixKey, state: &SequenceState, checkpoints: &[Checkpoint]) {
        let id = prefix_id(key);
        let paged = state.layers.iter().any(|l| matches!(l, LayerState::KeysValues(_)));
        let full = if paged { state.len() / PAGE * PAGE } else { 0 };
        let mut blocks = vec![];
        for index in 0..full / PAGE {
            match self.store_block(key, state, index) {
                Ok(block) => blocks.push(block),
                Err(e) => return tracing::warn!(cache = "prefix cache", "could not write a block: {e}"),
            }
        }
        let mut arrays: Vec<(String, Array)> = vec![];
        for (i, layer) in state.layers.iter().enumerate() {
            match layer {
                // Only the positions past the blocks.
                LayerState::KeysValues(kv) if full > 0 => {
                    let tail = |a: Array| a.index((.., .., full as i32.., ..));
                    if let Some((k, v)) = kv.valid().filter(|_| state.len() > full) {
                        arrays.push((format!("layer.{i}.keys"), tail(k)));
                        arrays.push((format!("layer.{i}.values"), tail(v)));
                    }
                }
                _ => arrays.extend(layer.to_disk(&format!("layer.{i}"))),
            }
        }
        let mut saved = vec![];
        for (c, checkpoint) in checkpoints.iter().enumerate() {
            for (i, layer) in &checkpoint.layers {
                arrays.extend(layer.to_disk(&format!("checkpoint.{c}.layer.{i}")));
            }
            saved.push(SavedCheckpoint { len: checkpoint.len, layers: checkpoint.layers.iter().map(|(i, _)| *i).collect() });
        }
        let refs: Vec<(String, &Array)> = arrays.iter().map(|(n, a)| (n.clone(), a)).collect();
        let kinds = state.kinds();
        let position_shifts = state.position_shifts.clone();
        self.entries.store(&id, &refs, |seal| Manifest {
            format_version: FORMAT_VERSION,
            key: key.clone(),
            kinds,
            checkpoints: saved,
            position_shifts,
            blocks,
            seal,
        });
        self.remove_unlisted_blocks(); // of entries the budget evicted
    }
}

/// An entry's (or a block's) name: the hash of its model, tokens and media.
fn prefix_id(key: &PrefixKey) -> String {
    let mut id_hash = Fingerprint::new();
    id_hash.add(key.fingerprint.as_bytes());
    key.tokens.iter().for_each(|t| {
        id_hash.add(&t.to_le_bytes());
    });
    key.media.iter().for_each(|m| {
        id_hash.add(m.hash.as_bytes());
    });
    id_hash.finish()
}

/// Puts each full keys/values layer's blocks before its tail in `arrays`, every block checked
/// against its size and checksum first; a block that fails is deleted.
fn join_blocks(dir: &Path, manifest: &Manifest, arrays: &mut HashMap<String, Array>) -> Result<(), String> {
    if manifest.blocks.is_empty() {
        return Ok(());
    }
    let mut parts: HashMap<String, Vec<Array>> = HashMap::new();
    for block in &manifest.blocks {
        let path = dir.join(format!("{}.safetensors", block.id));
        let bytes = std::fs::read(&path).map_err(|e| format!("block {} is unreadable ({e})", block.id))?;
        if bytes.len() as u64 != block.seal.bytes || checksum(&bytes) != block.seal.checksum {
            let _ = std::fs::remove_file(&path);
            return Err(format!("block {} does not match its checksum (truncated or corrupt)", block.id));
        }
        for (name, array) in Array::load_safetensors(&path).map_err(|e| e.to_string())? {
            parts.entry(name).or_default().push(array);
        }
    }
    for (i, kind) in manifest.kinds.iter().enumerate() {
        if *kind != StateKind::KeysValues {
            continue;
        }
        for part in ["keys", "values"] {
            let name = format!("layer.{i}.{part}");
            let mut pieces = parts.remove(&name).unwrap_or_default();
            if pieces.len() != manifest.blocks.len() {
                return Err(format!("{name} is missing from a block"));
            }
            pieces.extend(arrays.remove(&name));
            let joined = mlx_rs::ops::concatenate(&pieces, 2).map_err(|e| e.to_string())?;
            arrays.insert(name, joined);
        }
    }
    Ok(())
}

/// The layers `indices` (of `kinds`) saved under `prefix`.{index}.
fn layers_from(
    kinds: &[StateKind],
    prefix: &str,
    indices: Vec<usize>,
    arrays: &mut HashMap<String, Array>,
    len: usize,
) -> Result<Vec<LayerState>, String> {
    indices
        .into_iter()
        .map(|i| {
            let kind = *kinds.get(i).ok_or("a checkpoint names a layer the entry does not have")?;
            LayerState::from_disk(kind, &format!("{prefix}.{i}"), arrays, len)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-layer state whose keys are its tokens.
    fn state_of(tokens: &[u32]) -> SequenceState {
        let mut state = SequenceState::new(&[StateKind::KeysValues]);
        let data: Vec<f32> = tokens.iter().flat_map(|&t| [t as f32; 16]).collect();
        let keys = Array::from_slice(&data, &[1, 1, tokens.len() as i32, 16]);
        state.layers[0].keys_values_mut().unwrap().append(keys.clone(), keys).unwrap();
        state
    }

    fn key(tokens: &[u32]) -> PrefixKey {
        PrefixKey { fingerprint: "model".into(), tokens: tokens.to_vec(), media: vec![] }
    }

    #[test]
    fn shared_blocks_count_once_and_outlive_the_entries_evicted_before_their_last() {
        let dir = tempfile::tempdir().unwrap();
        let first: Vec<u32> = (0..3 * PAGE as u32 + 10).collect();
        // A regenerate: the same three pages, another tail.
        let branch: Vec<u32> = first[..3 * PAGE].iter().copied().chain(1000..1010).collect();
        let mut tier = DiskTier::open(dir.path().to_path_buf(), u64::MAX);
        tier.store(&key(&first), &state_of(&first), &[]);
        let one = tier.bytes();
        tier.store(&key(&branch), &state_of(&branch), &[]);
        let blocks = std::fs::read_dir(dir.path().join("blocks")).unwrap().count();
        assert_eq!(blocks, 3, "the branch shares its three blocks");
        let tail = tier.bytes() - one;
        assert!(tail * 10 < one, "the branch adds its tail only ({tail} of {one} bytes)");
        let both = tier.bytes();
        drop(tier);

        // A budget that holds both only when their blocks count once.
        let mut tier = DiskTier::open(dir.path().to_path_buf(), both);
        let other: Vec<u32> = (5000..5010).collect();
        std::thread::sleep(std::time::Duration::from_millis(20)); // mtimes order the LRU
        let found = tier.best_match(&key(&branch), &|k| k.shared_len(&key(&branch))).unwrap();
        assert!(tier.load(&found.id, "model").is_some(), "the branch is used now");
        // Another conversation as long as a tail: the least recently used entry, the first,
        // goes; the blocks stay with the branch.
        tier.store(&key(&other), &state_of(&other), &[]);
        assert!(tier.bytes() <= both);
        let first_found = tier.best_match(&key(&first), &|k| k.shared_len(&key(&first))).unwrap();
        assert_eq!(first_found.shared, 3 * PAGE, "only the branch's shared pages are left of the first");
        assert_eq!(std::fs::read_dir(dir.path().join("blocks")).unwrap().count(), 3);
        let found = tier.best_match(&key(&branch), &|k| k.shared_len(&key(&branch))).unwrap();
        let (state, _) = tier.load(&found.id, "model").expect("the branch loads with the shared blocks");
        assert_eq!(state.len(), branch.len());
    }

    #[test]
    fn position_shifts_survive_the_disk() {
        let dir = tempfile::tempdir().unwrap();
        let mut tier = DiskTier::open(dir.path().to_path_buf(), 1 << 20);
        let mut state = SequenceState::new(&[StateKind::KeysValues]);
        let zeros = || mlx_rs::ops::zeros::<f32>(&[1, 1, 3, 16]).unwrap();
        state.layers[0].keys_values_mut().unwrap().append(zeros(), zeros()).unwrap();
        state.set_position_shift(-5);
        let key = PrefixKey { fingerprint: "model".into(), tokens: vec![1, 2, 3], media: vec![] };
        tier.store(&key, &state, &[]);
        let found = tier.best_match(&key, &|k| k.tokens.len()).expect("the stored entry");
        let (loaded, _) = tier.load(&found.id, "model").expect("it loads back");
        assert_eq!(loaded.position_shifts, [PositionShift { from: 3, shift: -5 }]);
        assert_eq!(loaded.position_shift(), -5);
    }
}
