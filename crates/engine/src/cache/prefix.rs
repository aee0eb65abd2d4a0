//! The prefix ("session") cache: each finished sequence's KV cache, kept under its identity so
//! the next request that starts the same way prefills only what is new.
//!
//! Identity = model fingerprint + token ids + the content hash of every media item and where
//! it sits (placeholder tokens look alike for different images, so tokens alone are not enough).
//! A request takes the entry sharing the longest prefix with it, truncated to that point.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cache::disk::DiskTier;
use crate::cache::KvCache;

/// A media item in a prompt: its first token position and its content hash.
#[derive(Debug, Clone, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct MediaSpan {
    pub position: usize,
    pub hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PrefixKey {
    pub fingerprint: String,
    pub tokens: Vec<u32>,
    pub media: Vec<MediaSpan>,
}

impl PrefixKey {
    /// How many leading positions this key shares with another of the same model: the common
    /// token prefix, cut before the first media item whose content differs.
    pub fn shared_len(&self, other: &PrefixKey) -> usize {
        if self.fingerprint != other.fingerprint {
            return 0;
        }
        let tokens = self.tokens.iter().zip(&other.tokens).take_while(|(a, b)| a == b).count();
        let unmatched = |a: &[MediaSpan], b: &[MediaSpan]| -> Option<usize> {
            a.iter().filter(|m| m.position < tokens && !b.contains(m)).map(|m| m.position).min()
        };
        [Some(tokens), unmatched(&self.media, &other.media), unmatched(&other.media, &self.media)]
            .into_iter()
            .flatten()
            .min()
            .unwrap_or(0)
    }
}

#[derive(Debug, Clone)]
pub struct PrefixOptions {
    pub enabled: bool,
    /// Bytes of KV kept in memory (least recently used evicted first, to disk).
    pub memory_budget: usize,
    /// Bytes kept on disk; `None` for no disk tier.
    pub disk_budget: u64,
    /// The disk tier's folder (the app's cache folder); `None` keeps entries in memory only.
    pub dir: Option<PathBuf>,
}

impl Default for PrefixOptions {
    fn default() -> Self {
        Self { enabled: true, memory_budget: 2 << 30, disk_budget: 8 << 30, dir: None }
    }
}

/// Where a reused prefix came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ReuseSource {
    Memory,
    Disk,
    None,
}

impl ReuseSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ReuseSource::Memory => "memory",
            ReuseSource::Disk => "disk",
            ReuseSource::None => "none",
        }
    }
}

/// What a lookup found: a cache holding the first `reused` positions, or why nothing.
pub struct Reuse {
    pub cache: Option<KvCache>,
    pub reused: usize,
    pub source: ReuseSource,
    pub declined: Option<String>,
}

struct Entry {
    key: PrefixKey,
    cache: KvCache,
    last_used: Instant,
    bytes: usize,
    /// Already written to disk as it is now.
    persisted: bool,
}

pub struct PrefixCache {
    options: PrefixOptions,
    entries: Vec<Entry>,
    disk: Option<DiskTier>,
}

impl PrefixCache {
    pub fn new(options: PrefixOptions) -> Self {
        let disk = match (&options.dir, options.enabled) {
            (Some(dir), true) => Some(DiskTier::open(dir.clone(), options.disk_budget)),
            _ => None,
        };
        Self { options, entries: vec![], disk }
    }

    pub fn enabled(&self) -> bool {
        self.options.enabled
    }

    /// The longest usable prefix for `key`, leaving at least one position to compute (the
    /// last prompt token must run to produce the next token's logits).
    pub fn lookup(&mut self, key: &PrefixKey) -> Reuse {
        let none = |why: &str| Reuse { cache: None, reused: 0, source: ReuseSource::None, declined: Some(why.into()) };
        if !self.options.enabled {
            return none("the prefix cache is off");
        }
        let limit = key.tokens.len().saturating_sub(1);
        let best_memory = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| (i, e.key.shared_len(key).min(limit)))
            .max_by_key(|&(_, n)| n);
        let best_disk = self.disk.as_ref().and_then(|d| d.best_match(key, limit));

        match (best_memory, best_disk) {
            (_, Some((disk_len, id))) if disk_len > best_memory.map_or(0, |(_, n)| n) => {
                match self.disk.as_mut().expect("disk matched").load(&id, &key.fingerprint) {
                    Some(mut cache) => {
                        cache.truncate(disk_len);
                        Reuse { cache: Some(cache), reused: disk_len, source: ReuseSource::Disk, declined: None }
                    }
                    None => none("the disk entry was unreadable and has been removed"),
                }
            }
            (Some((i, n)), _) if n > 0 => {
                let entry = &mut self.entries[i];
                entry.last_used = Instant::now();
                let mut cache = entry.cache.clone();
                cache.truncate(n);
                Reuse { cache: Some(cache), reused: n, source: ReuseSource::Memory, declined: None }
            }
            _ if self.entries.is_empty() && self.disk.as_ref().is_none_or(|d| d.is_empty()) => {
                none("the prefix cache is empty")
            }
            _ => none("no cached conversation starts like this prompt"),
        }
    }

    /// Keep a finished sequence's cache. An entry that is a prefix of it is replaced.
    pub fn insert(&mut self, key: PrefixKey, cache: KvCache) {
        if !self.options.enabled || cache.len() != key.tokens.len() {
            return;
        }
        self.entries.retain(|e| !(e.key.fingerprint == key.fingerprint && key.shared_len(&e.key) == e.key.tokens.len()));
        let bytes = cache.nbytes();
        self.entries.push(Entry { key, cache, last_used: Instant::now(), bytes, persisted: false });
        self.evict_to_budget();
    }

    fn evict_to_budget(&mut self) {
        while self.entries.iter().map(|e| e.bytes).sum::<usize>() > self.options.memory_budget && !self.entries.is_empty() {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used).expect("non-empty");
            let entry = self.entries.remove(oldest);
            self.persist(&entry);
        }
    }

    fn persist(&mut self, entry: &Entry) {
        if let (Some(disk), false) = (self.disk.as_mut(), entry.persisted) {
            disk.store(&entry.key, &entry.cache);
        }
    }

    /// Write entries unused for `idle_for` to disk, keeping them in memory too.
    pub fn persist_idle(&mut self, idle_for: Duration) {
        let mut entries = std::mem::take(&mut self.entries);
        for entry in entries.iter_mut().filter(|e| e.last_used.elapsed() >= idle_for && !e.persisted) {
            self.persist(entry);
            entry.persisted = true;
        }
        self.entries = entries;
    }

    /// At shutdown: everything to disk.
    pub fn persist_all(&mut self) {
        let entries = std::mem::take(&mut self.entries);
        for entry in &entries {
            self.persist(entry);
        }
    }

    /// Bytes held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.entries.iter().map(|e| e.bytes).sum()
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Forget every entry of a model (unloaded), after writing them to disk.
    pub fn release_model(&mut self, fingerprint: &str) {
        let (gone, kept): (Vec<Entry>, Vec<Entry>) =
            std::mem::take(&mut self.entries).into_iter().partition(|e| e.key.fingerprint == fingerprint);
        self.entries = kept;
        for entry in &gone {
            self.persist(entry);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tokens: &[u32], media: &[(usize, &str)]) -> PrefixKey {
        PrefixKey {
            fingerprint: "m".into(),
            tokens: tokens.to_vec(),
            media: media.iter().map(|&(position, h)| MediaSpan { position, hash: h.into() }).collect(),
        }
    }

    #[test]
    fn shared_prefix_of_tokens() {
        assert_eq!(key(&[1, 2, 3, 4], &[]).shared_len(&key(&[1, 2, 9], &[])), 2);
        assert_eq!(key(&[1, 2, 3], &[]).shared_len(&key(&[1, 2, 3, 4, 5], &[])), 3);
        let mut other = key(&[1, 2, 3], &[]);
        other.fingerprint = "other model".into();
        assert_eq!(key(&[1, 2, 3], &[]).shared_len(&other), 0);
    }

    #[test]
    fn different_media_content_stops_the_prefix_at_the_media() {
        let a = key(&[1, 2, 7, 7, 7, 3], &[(2, "cat.png")]);
        let b = key(&[1, 2, 7, 7, 7, 3], &[(2, "dog.png")]);
        assert_eq!(a.shared_len(&b), 2);
        assert_eq!(a.shared_len(&a.clone()), 6);
        // Media after the divergence point don't matter.
        let c = key(&[1, 2, 3, 7, 7], &[(3, "cat.png")]);
        let d = key(&[1, 2, 4, 7, 7], &[(3, "dog.png")]);
        assert_eq!(c.shared_len(&d), 2);
    }
}
