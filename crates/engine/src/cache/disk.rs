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
use crate::cache::tensors::{dtype_size, HostBuffer, TensorInfo, TensorReader};
use crate::model::format::Fingerprint;
use crate::state::{Checkpoint, KeysValues, LayerState, PositionShift, SequenceState, StateKind, PAGE};

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

    /// Loads and verifies an entry; a bad one is deleted and `None` returned. Its files are
    /// read once, front to back, each checked against its checksum as it is read; the full
    /// keys/values layers go straight into the buffers the resumed sequence extends (with room
    /// for the next turn), blocks and tail in place.
    pub fn load(&mut self, id: &str, fingerprint: &str) -> Option<(SequenceState, Vec<Checkpoint>)> {
        let started = std::time::Instant::now();
        let blocks = self.blocks.clone();
        let mut bytes = 0;
        let loaded = self.entries.load_file(id, |manifest, path| {
            if manifest.key.fingerprint != fingerprint {
                return Err("it belongs to another model".into());
            }
            bytes = manifest.seal.bytes + manifest.blocks.iter().map(|b| b.seal.bytes).sum::<u64>();
            let len = manifest.key.tokens.len();
            let mut full = FullKeysValues::new(&manifest.kinds, len);
            for (index, block) in manifest.blocks.iter().enumerate() {
                let path = blocks.join(format!("{}.safetensors", block.id));
                if let Err(e) = read_block(&path, &block.seal, index, &mut full) {
                    let _ = std::fs::remove_file(&path);
                    return Err(format!("block {} {e}", block.id));
                }
            }
            full.check_filled(manifest.blocks.len() * PAGE, "is missing from a block")?;
            let mut reader = TensorReader::open(path, &manifest.seal).map_err(|e| format!("the data {e}"))?;
            let mut arrays = HashMap::new();
            for tensor in reader.tensors.clone() {
                if full.takes(&tensor.name) {
                    full.read(&mut reader, &tensor, manifest.blocks.len() * PAGE)?;
                } else {
                    arrays.insert(tensor.name.clone(), reader.read_array(&tensor).map_err(|e| format!("the data {e}"))?);
                }
            }
            reader.finish().map_err(|e| format!("the data {e}"))?;
            full.check_filled(len, "is missing")?;
            let layers = manifest
                .kinds
                .iter()
                .enumerate()
                .map(|(i, &kind)| match kind {
                    StateKind::KeysValues => full.layer(i),
                    _ => LayerState::from_disk(kind, &format!("layer.{i}"), &mut arrays, len),
                })
                .collect::<Result<Vec<_>, String>>()?;
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

/// Reads block `index` (positions `index * PAGE` to the next page of every full keys/values
/// layer) into `full`, checked against its seal.
fn read_block(path: &Path, seal: &Seal, index: usize, full: &mut FullKeysValues) -> Result<(), String> {
    let mut reader = TensorReader::open(path, seal)?;
    for tensor in reader.tensors.clone() {
        if full.takes(&tensor.name) {
            if tensor.shape.get(2) != Some(&(PAGE as i32)) {
                return Err(format!("holds {} with other than {PAGE} positions", tensor.name));
            }
            full.read(&mut reader, &tensor, index * PAGE)?;
        }
    }
    reader.finish()
}

/// The full keys/values layers of an entry being read: for each, a keys and a values buffer
/// of the sequence's length and room for a next turn (what a buffer grown as the sequence ran
/// holds), filled piece by piece (blocks, then the entry's tail) as the files are read.
struct FullKeysValues {
    len: usize,
    capacity: usize,
    /// By name (`layer.{i}.keys`, `layer.{i}.values`): the buffer (made at its first piece) and
    /// the positions filled so far.
    buffers: HashMap<String, Option<(HostBuffer, usize)>>,
}

impl FullKeysValues {
    fn new(kinds: &[StateKind], len: usize) -> Self {
        let buffers = (kinds.iter().enumerate())
            .filter(|(_, k)| **k == StateKind::KeysValues)
            .flat_map(|(i, _)| [format!("layer.{i}.keys"), format!("layer.{i}.values")])
            .map(|name| (name, None))
            .collect();
        Self { len, capacity: KeysValues::capacity_for(len + 1), buffers }
    }

    /// Whether `name` is part of a full keys/values layer.
    fn takes(&self, name: &str) -> bool {
        self.buffers.contains_key(name)
    }

    /// Reads `tensor` ([batch, heads, positions, head_dim]) into its buffer from position
    /// `start`: each head's positions are one run of bytes in the file and in the buffer.
    fn read(&mut self, reader: &mut TensorReader, tensor: &TensorInfo, start: usize) -> Result<(), String> {
        let &[batch, heads, n, dim] = tensor.shape.as_slice() else {
            return Err(format!("{} is not [batch, heads, positions, head_dim]", tensor.name));
        };
        let (len, capacity) = (self.len, self.capacity);
        let slot = self.buffers.get_mut(&tensor.name).expect("taken");
        if slot.is_none() {
            *slot = Some((HostBuffer::new(&[batch, heads, capacity as i32, dim], tensor.dtype)?, 0));
        }
        let (buffer, filled) = slot.as_mut().expect("made");
        let n = n as usize;
        if buffer.shape() != [batch, heads, capacity as i32, dim] || buffer.dtype() != tensor.dtype {
            return Err(format!("{}'s pieces differ in shape or dtype", tensor.name));
        }
        if *filled != start || start + n > len {
            return Err(format!("{} holds positions {start} to {} where {} were expected next", tensor.name, start + n, *filled));
        }
        // A position of a head: head_dim elements.
        let position = dim as usize * dtype_size(tensor.dtype) as usize;
        let run = n * position;
        reader.read_tensor(tensor, buffer, |offset| {
            let (row, within) = (offset / run, offset % run);
            ((row * capacity + start) * position + within, run - within)
        })?;
        *filled += n;
        Ok(())
    }

    /// Fails unless every buffer holds `positions` positions.
    fn check_filled(&self, positions: usize, missing: &str) -> Result<(), String> {
        match self.buffers.iter().find(|(_, b)| b.as_ref().map_or(0, |(_, filled)| *filled) != positions) {
            Some((name, _)) if positions > 0 => Err(format!("{name} {missing}")),
            _ => Ok(()),
        }
    }

    /// Layer `i`, once read whole: its buffers' room past the sequence zeroed (as a grown
    /// buffer's is).
    fn layer(&mut self, i: usize) -> Result<LayerState, String> {
        let (len, capacity) = (self.len, self.capacity);
        let mut take = |part: &str| {
            let (mut buffer, filled) = self.buffers.get_mut(&format!("layer.{i}.{part}")).and_then(Option::take)?;
            let &[batch, heads, _, dim] = buffer.shape() else { return None };
            let position = dim as usize * dtype_size(buffer.dtype()) as usize;
            for row in 0..batch as usize * heads as usize {
                buffer.zero((row * capacity + len) * position, (capacity - len) * position);
            }
            (filled == len).then(|| buffer.into_array())
        };
        match (take("keys"), take("values")) {
            (Some(keys), Some(values)) => Ok(LayerState::KeysValues(KeysValues::from_buffers(keys, values, len))),
            _ => Err(format!("layer.{i} is missing")),
        }
    }
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

    /// Two full keys/values layers of 3 heads and a window layer, every value distinct, in
    /// `dtype`.
    fn varied_state(len: usize, dtype: mlx_rs::Dtype) -> SequenceState {
        let kinds = [StateKind::KeysValues, StateKind::Window { size: 8 }, StateKind::KeysValues];
        let mut state = SequenceState::new(&kinds);
        for (i, layer) in state.layers.iter_mut().enumerate() {
            let values = |salt: usize| {
                let data: Vec<f32> = (0..3 * len * 4).map(|x| (x * 7 + salt * 1000 + i) as f32 * 0.37 - 11.0).collect();
                Array::from_slice(&data, &[1, 3, len as i32, 4]).as_dtype(dtype).unwrap()
            };
            match layer {
                LayerState::Window(w) => drop(w.append(values(1), values(2)).unwrap()),
                other => drop(other.keys_values_mut().unwrap().append(values(1), values(2)).unwrap()),
            }
        }
        state
    }

    fn same(a: &Array, b: &Array) -> bool {
        a.shape() == b.shape() && a.dtype() == b.dtype() && mlx_rs::ops::array_eq(a, b, true).unwrap().item_exact::<bool>()
    }

    #[test]
    fn an_entry_reads_back_bit_identical_with_room_for_the_next_turn() {
        // Blocks and a tail, blocks only, a tail only.
        for len in [2 * PAGE + 37, 2 * PAGE, 70] {
            for dtype in [mlx_rs::Dtype::Float32, mlx_rs::Dtype::Bfloat16] {
                let dir = tempfile::tempdir().unwrap();
                let mut tier = DiskTier::open(dir.path().to_path_buf(), u64::MAX);
                let tokens: Vec<u32> = (0..len as u32).collect();
                let state = varied_state(len, dtype);
                tier.store(&key(&tokens), &state, &[]);
                drop(tier);
                let mut tier = DiskTier::open(dir.path().to_path_buf(), u64::MAX);
                let found = tier.best_match(&key(&tokens), &|k| k.shared_len(&key(&tokens))).unwrap();
                let (mut loaded, _) = tier.load(&found.id, "model").expect("it loads back");
                assert_eq!(loaded.len(), len);
                for (i, (want, got)) in state.layers.iter().zip(&loaded.layers).enumerate() {
                    let (want, got) = (want.to_disk("l"), got.to_disk("l"));
                    assert_eq!(want.len(), got.len(), "{len} {dtype:?} layer {i}");
                    for ((name, a), (_, b)) in want.iter().zip(&got) {
                        assert!(same(a, b), "{len} {dtype:?}: {name} of layer {i} differs");
                    }
                }
                // The next turn's 30 positions go into the buffers read, in place; the room
                // for them is zeros, as in a buffer grown while the sequence ran.
                let kv = loaded.layers[0].keys_values_mut().unwrap();
                for buffer in kv.arrays() {
                    let room = buffer.index((.., .., len as i32.., ..));
                    assert!(room.dim(2) > 0 && same(&room, &mlx_rs::ops::zeros_like(&room).unwrap()), "{len} {dtype:?}");
                }
                let bytes = kv.nbytes();
                let turn = mlx_rs::ops::zeros_dtype(&[1, 3, 30, 4], dtype).unwrap();
                kv.append(turn.clone(), turn).unwrap();
                assert_eq!(kv.nbytes(), bytes, "{len} {dtype:?}: the buffers did not grow");
            }
        }
    }

    #[test]
    fn a_block_whose_header_lies_is_refused_not_read() {
        let dir = tempfile::tempdir().unwrap();
        let tokens: Vec<u32> = (0..PAGE as u32 + 5).collect();
        let mut tier = DiskTier::open(dir.path().to_path_buf(), u64::MAX);
        tier.store(&key(&tokens), &state_of(&tokens), &[]);
        // The same size and a valid checksum, but a header that puts the keys past the data.
        let block = std::fs::read_dir(dir.path().join("blocks")).unwrap().next().unwrap().unwrap().path();
        let mut bytes = std::fs::read(&block).unwrap();
        let header_len = u64::from_le_bytes(bytes[..8].try_into().unwrap()) as usize;
        let header = String::from_utf8(bytes[8..8 + header_len].to_vec()).unwrap();
        let lying = header.replacen("\"shape\":[1,1,256,16]", "\"shape\":[1,1,999,16]", 1);
        assert_ne!(lying, header, "the header names the shape: {header}");
        bytes[8..8 + header_len].copy_from_slice(lying.as_bytes());
        std::fs::write(&block, &bytes).unwrap();
        let manifest_path = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|e| e == "json"))
            .unwrap();
        let manifest = std::fs::read_to_string(&manifest_path).unwrap();
        let old = tier.entries.entries().next().unwrap().1.blocks[0].seal.checksum.clone();
        std::fs::write(&manifest_path, manifest.replace(&old, &checksum(&bytes))).unwrap();
        drop(tier);

        let mut tier = DiskTier::open(dir.path().to_path_buf(), u64::MAX);
        let found = tier.best_match(&key(&tokens), &|k| k.shared_len(&key(&tokens))).unwrap();
        assert!(tier.load(&found.id, "model").is_none(), "refused");
        assert!(tier.is_empty(), "and removed");
        assert!(!block.exists(), "with its block");
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
