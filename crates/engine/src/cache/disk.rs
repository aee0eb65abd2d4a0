//! The prefix cache's disk tier: one safetensors file per entry holding its layers' state and
//! its checkpoints, beside a JSON manifest (format version, model fingerprint, tokens, media
//! hashes, each layer's kind, the checkpoints' positions, checksum). The file handling (atomic
//! writes, verification, byte budget) is `entries::EntryDir`'s.

use std::collections::HashMap;

use mlx_rs::Array;

use crate::cache::entries::{EntryDir, Seal};
use crate::cache::key::{resume_point, PrefixKey};
use crate::model::format::Fingerprint;
use crate::state::{Checkpoint, LayerState, PositionShift, SequenceState, StateKind};

/// 2: per-layer state kinds and checkpoints (version 1 held keys and values only).
/// 3: CRC-32 checksums (2's FNV-1a went a byte at a time, one dependent multiply per byte).
const FORMAT_VERSION: u32 = 3;

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
}

impl DiskTier {
    /// Reads every manifest under `dir`; unreadable ones (and their data) are removed.
    pub fn open(dir: std::path::PathBuf, budget: u64) -> Self {
        Self { entries: EntryDir::open(dir, budget, "prefix cache") }
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
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
        self.entries.load(id, |manifest, mut arrays| {
            if manifest.key.fingerprint != fingerprint {
                return Err("it belongs to another model".into());
            }
            let len = manifest.key.tokens.len();
            let layers = layers_from(&manifest.kinds, "layer", (0..manifest.kinds.len()).collect(), &mut arrays, len)?;
            let mut checkpoints = Vec::with_capacity(manifest.checkpoints.len());
            for (c, saved) in manifest.checkpoints.iter().enumerate() {
                let held = layers_from(&manifest.kinds, &format!("checkpoint.{c}.layer"), saved.layers.clone(), &mut arrays, saved.len)?;
                checkpoints.push(Checkpoint { len: saved.len, layers: saved.layers.iter().copied().zip(held).collect() });
            }
            Ok((SequenceState::from_parts(layers, manifest.position_shifts.clone()), checkpoints))
        })
    }

    /// Writes an entry, then trims the tier to its budget.
    pub fn store(&mut self, key: &PrefixKey, state: &SequenceState, checkpoints: &[Checkpoint]) {
        let mut id_hash = Fingerprint::new();
        id_hash.add(key.fingerprint.as_bytes());
        key.tokens.iter().for_each(|t| {
            id_hash.add(&t.to_le_bytes());
        });
        key.media.iter().for_each(|m| {
            id_hash.add(m.hash.as_bytes());
        });
        let id = id_hash.finish();
        let mut arrays: Vec<(String, Array)> = vec![];
        for (i, layer) in state.layers.iter().enumerate() {
            arrays.extend(layer.to_disk(&format!("layer.{i}")));
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
            seal,
        });
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
