//! The encoder cache: a vision or audio tower's output for one media item, so a repeated
//! image or clip never runs the tower twice. Keyed by the tower's identity (model fingerprint
//! and preprocessing parameters, as one string the model builds) and the media's content hash.
//!
//! Memory is bounded by bytes, least recently used evicted first. With a folder, every insert
//! is also written through to disk (entries are content-addressed, so each is written once),
//! where a restarted engine finds it; the disk tier has its own byte budget.

use std::path::PathBuf;

use mlx_rs::Array;

use crate::cache::entries::{EntryDir, Seal};
use crate::model::format::Fingerprint;

/// 2: CRC-32 checksums (1 had FNV-1a).
const FORMAT_VERSION: u32 = 2;
const TENSOR: &str = "output";

#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct EncoderKey {
    /// The tower's identity: model fingerprint plus every preprocessing parameter that changes
    /// its input (image size, normalisation, sample rate, ...).
    pub tower: String,
    /// The media's content hash (`media::content_hash`).
    pub hash: String,
}

impl EncoderKey {
    pub fn new(tower: impl Into<String>, hash: impl Into<String>) -> Self {
        Self { tower: tower.into(), hash: hash.into() }
    }

    fn id(&self) -> String {
        let mut id = Fingerprint::new();
        id.add(self.tower.as_bytes()).add(self.hash.as_bytes());
        id.finish()
    }
}

#[derive(Debug, Clone)]
pub struct EncoderOptions {
    pub enabled: bool,
    /// Bytes of tower outputs kept in memory.
    pub memory_budget: usize,
    /// Bytes kept on disk.
    pub disk_budget: u64,
    /// The disk tier's folder; `None` keeps entries in memory only.
    pub dir: Option<PathBuf>,
}

impl Default for EncoderOptions {
    fn default() -> Self {
        use crate::defaults::{ENCODER_CACHE_DISK_MIB, ENCODER_CACHE_MEMORY_MIB};
        Self { enabled: true, memory_budget: ENCODER_CACHE_MEMORY_MIB << 20, disk_budget: ENCODER_CACHE_DISK_MIB << 20, dir: None }
    }
}

/// Where a lookup found the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum EncoderSource {
    Memory,
    Disk,
    Miss,
}

impl EncoderSource {
    pub fn as_str(self) -> &'static str {
        match self {
            EncoderSource::Memory => "memory",
            EncoderSource::Disk => "disk",
            EncoderSource::Miss => "miss",
        }
    }
}

pub struct EncoderLookup {
    /// The tower output; `None` on a miss.
    pub output: Option<Array>,
    pub source: EncoderSource,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize)]
pub struct EncoderStats {
    pub memory_hits: u64,
    pub disk_hits: u64,
    pub misses: u64,
    pub inserts: u64,
    /// Entries dropped from memory for the budget (still on disk if there is a disk tier).
    pub evictions: u64,
}

#[derive(serde::Serialize, serde::Deserialize)]
struct Manifest {
    format_version: u32,
    key: EncoderKey,
    shape: Vec<i32>,
    dtype: String,
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

struct Entry {
    key: EncoderKey,
    output: Array,
    bytes: usize,
    /// The `clock` value when last used (a counter: deterministic, unlike timestamps).
    last_used: u64,
}

pub struct EncoderCache {
    options: EncoderOptions,
    entries: Vec<Entry>,
    disk: Option<EntryDir<Manifest>>,
    stats: EncoderStats,
    clock: u64,
}

fn dtype_name(array: &Array) -> String {
    format!("{:?}", array.dtype())
}

impl EncoderCache {
    pub fn new(options: EncoderOptions) -> Self {
        let disk = match (&options.dir, options.enabled) {
            (Some(dir), true) => Some(EntryDir::open(dir.clone(), options.disk_budget, "encoder cache")),
            _ => None,
        };
        Self { options, entries: vec![], disk, stats: EncoderStats::default(), clock: 0 }
    }

    pub fn enabled(&self) -> bool {
        self.options.enabled
    }

    /// The cached output for `key`: from memory, else from disk (verified, then kept in
    /// memory), else a miss.
    pub fn lookup(&mut self, key: &EncoderKey) -> EncoderLookup {
        self.clock += 1;
        if let Some(entry) = self.entries.iter_mut().find(|e| &e.key == key) {
            entry.last_used = self.clock;
            self.stats.memory_hits += 1;
            return EncoderLookup { output: Some(entry.output.clone()), source: EncoderSource::Memory };
        }
        let loaded = self.disk.as_mut().and_then(|disk| {
            disk.load(&key.id(), |manifest, mut arrays| {
                if &manifest.key != key {
                    return Err("it belongs to another tower or media item".into());
                }
                let output = arrays.remove(TENSOR).ok_or("the output tensor is missing")?;
                if output.shape() != manifest.shape.as_slice() || dtype_name(&output) != manifest.dtype {
                    return Err("its shape or type disagrees with its manifest".into());
                }
                Ok(output)
            })
        });
        match loaded {
            Some(output) => {
                self.stats.disk_hits += 1;
                self.keep(key.clone(), output.clone());
                EncoderLookup { output: Some(output), source: EncoderSource::Disk }
            }
            None => {
                self.stats.misses += 1;
                EncoderLookup { output: None, source: EncoderSource::Miss }
            }
        }
    }

    /// Keeps a tower's output, in memory and (once) on disk.
    pub fn insert(&mut self, key: EncoderKey, output: Array) {
        if !self.options.enabled {
            return;
        }
        self.stats.inserts += 1;
        if let Some(disk) = self.disk.as_mut() {
            let id = key.id();
            if !disk.contains(&id) {
                let (shape, dtype) = (output.shape().to_vec(), dtype_name(&output));
                let manifest_key = key.clone();
                disk.store(&id, &[(TENSOR.to_string(), &output)], |seal| Manifest {
                    format_version: FORMAT_VERSION,
                    key: manifest_key,
                    shape,
                    dtype,
                    seal,
                });
            }
        }
        self.keep(key, output);
    }

    fn keep(&mut self, key: EncoderKey, output: Array) {
        self.clock += 1;
        self.entries.retain(|e| e.key != key);
        let bytes = output.nbytes();
        self.entries.push(Entry { key, output, bytes, last_used: self.clock });
        while self.memory_bytes() > self.options.memory_budget && !self.entries.is_empty() {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used).expect("non-empty");
            self.entries.remove(oldest);
            self.stats.evictions += 1;
        }
    }

    pub fn stats(&self) -> EncoderStats {
        self.stats
    }

    /// Bytes held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes).sum()
    }

    /// Bytes held on disk.
    pub fn disk_bytes(&self) -> u64 {
        self.disk.as_ref().map_or(0, |d| d.bytes())
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forgets a tower's entries in memory (its model was unloaded); they stay on disk.
    pub fn release_tower(&mut self, tower: &str) {
        self.entries.retain(|e| e.key.tower != tower);
    }
}
