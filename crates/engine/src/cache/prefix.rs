//! The prefix ("session") cache: each finished sequence's state, kept under its identity so
//! the next request that starts the same way prefills only what is new.
//!
//! Identity is `key::PrefixKey`. A request takes the entry sharing the longest prefix with it,
//! cut back to that point (shared with the cache; a request that continues the whole entry
//! moves it out, and puts its own back when it ends). State that cannot be cut back (rotating
//! windows, recurrent layers) resumes instead from the latest of the entry's checkpoints at or
//! before the shared prefix.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cache::disk::DiskTier;
use crate::cache::key::{resume_point, PrefixKey};
use crate::state::{Checkpoint, SequenceState};

/// Checkpoints kept per entry (the latest ones); each costs the non-trimmable layers' bytes.
pub const MAX_CHECKPOINTS: usize = 16;

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
        use crate::defaults::{PREFIX_CACHE_DISK_MIB, PREFIX_CACHE_MEMORY_MIB};
        Self { enabled: true, memory_budget: PREFIX_CACHE_MEMORY_MIB << 20, disk_budget: PREFIX_CACHE_DISK_MIB << 20, dir: None }
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

/// What a lookup found: a state holding the first `reused` positions, or why nothing.
pub struct Reuse {
    pub state: Option<SequenceState>,
    pub reused: usize,
    pub source: ReuseSource,
    pub declined: Option<String>,
    /// Set when the state was restored from a checkpoint (not cut back): the shared prefix it
    /// fell back from.
    pub from_checkpoint: Option<CheckpointResume>,
    /// The source entry's checkpoints up to `reused`, still valid for the resumed sequence.
    pub checkpoints: Vec<Checkpoint>,
}

/// A resume from a checkpoint, for the plan.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CheckpointResume {
    /// Where the checkpoint is.
    pub position: usize,
    /// How far the request matched the cached sequence.
    pub shared: usize,
}

impl Reuse {
    pub fn none(why: &str) -> Self {
        Reuse { state: None, reused: 0, source: ReuseSource::None, declined: Some(why.into()), from_checkpoint: None, checkpoints: vec![] }
    }
}

struct Entry {
    key: PrefixKey,
    state: SequenceState,
    checkpoints: Vec<Checkpoint>,
    last_used: Instant,
    bytes: usize,
    /// Already written to disk as it is now.
    persisted: bool,
}

impl Entry {
    fn resume_point(&self, shared: usize) -> (usize, Option<usize>) {
        let positions: Vec<usize> = self.checkpoints.iter().map(|c| c.len).collect();
        resume_point(self.state.trimmable(), self.state.len(), &positions, shared)
    }
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
    /// last prompt token must run to produce the next token's logits). `allowed` moves a
    /// shared length back to where the request may resume (not inside a media item).
    pub fn lookup(&mut self, key: &PrefixKey, allowed: &dyn Fn(usize) -> usize) -> Reuse {
        if !self.options.enabled {
            return Reuse::none("the prefix cache is off");
        }
        let limit = key.tokens.len().saturating_sub(1);
        let shared_with = |k: &PrefixKey| allowed(k.shared_len(key).min(limit));
        // (entry, resume position, checkpoint index, shared length)
        let best_memory = self
            .entries
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let shared = shared_with(&e.key);
                let (at, checkpoint) = e.resume_point(shared);
                (i, at, checkpoint, shared)
            })
            .max_by_key(|&(_, at, _, _)| at);
        let best_disk = self.disk.as_ref().and_then(|d| d.best_match(key, &shared_with));
        let memory_len = best_memory.map_or(0, |(_, at, _, _)| at);

        match (best_memory, best_disk) {
            (_, Some(disk)) if disk.at > memory_len => match self.disk.as_mut().expect("disk matched").load(&disk.id, &key.fingerprint) {
                Some((state, checkpoints)) => resume(state, checkpoints, disk.at, disk.checkpoint, disk.shared, ReuseSource::Disk),
                None => Reuse::none("the disk entry was unreadable and has been removed"),
            },
            // A request that continues the whole entry takes it: the entry would be replaced
            // by the request's own when it ends, and a state held once is extended in place
            // (MLX writes into an array only it holds; a shared one is copied whole, keys and
            // values of every cached position, at the first new token).
            (Some((i, at, checkpoint, shared)), _) if at > 0 && at == self.entries[i].key.tokens.len() => {
                let entry = self.entries.remove(i);
                resume(entry.state, entry.checkpoints, at, checkpoint, shared, ReuseSource::Memory)
            }
            (Some((i, at, checkpoint, shared)), _) if at > 0 => {
                let entry = &mut self.entries[i];
                entry.last_used = Instant::now();
                resume(entry.state.clone(), entry.checkpoints.clone(), at, checkpoint, shared, ReuseSource::Memory)
            }
            (Some((_, 0, _, shared)), _) if shared > 0 => Reuse::none(&format!(
                "a cached conversation shares {shared} tokens, but its layers cannot be cut back and it has no checkpoint before that"
            )),
            _ if self.entries.is_empty() && self.disk.as_ref().is_none_or(|d| d.is_empty()) => Reuse::none("the prefix cache is empty"),
            _ => Reuse::none("no cached conversation starts like this prompt"),
        }
    }

    /// Keep a finished sequence's state and the checkpoints taken on the way. An entry that is
    /// a prefix of it is replaced.
    pub fn insert(&mut self, key: PrefixKey, state: SequenceState, mut checkpoints: Vec<Checkpoint>) {
        if !self.options.enabled || state.len() != key.tokens.len() {
            return;
        }
        // An entry this sequence extends is replaced; where its state cannot be cut back, its
        // end (the end of a reply, usually) and its checkpoints stay as this one's checkpoints.
        let (replaced, kept): (Vec<Entry>, Vec<Entry>) = std::mem::take(&mut self.entries)
            .into_iter()
            .partition(|e| e.key.fingerprint == key.fingerprint && key.shared_len(&e.key) == e.key.tokens.len());
        self.entries = kept;
        for old in replaced.into_iter().filter(|e| !e.state.trimmable()) {
            checkpoints.extend(old.state.checkpoint());
            checkpoints.extend(old.checkpoints);
        }
        checkpoints.retain(|c| c.len <= state.len());
        checkpoints.sort_by_key(|c| c.len);
        checkpoints.dedup_by_key(|c| c.len);
        if checkpoints.len() > MAX_CHECKPOINTS {
            checkpoints.drain(..checkpoints.len() - MAX_CHECKPOINTS);
        }
        let bytes = state.nbytes() + checkpoints.iter().map(Checkpoint::nbytes).sum::<usize>();
        self.entries.push(Entry { key, state, checkpoints, last_used: Instant::now(), bytes, persisted: false });
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
            disk.store(&entry.key, &entry.state, &entry.checkpoints);
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

/// A cached state taken to `at`: cut back, or restored from checkpoint `checkpoint`.
fn resume(
    mut state: SequenceState,
    checkpoints: Vec<Checkpoint>,
    at: usize,
    checkpoint: Option<usize>,
    shared: usize,
    source: ReuseSource,
) -> Reuse {
    let restored = match checkpoint {
        Some(i) => state.restore(&checkpoints[i]),
        None => state.trim(at),
    };
    if let Err(e) = restored {
        return Reuse::none(&format!("the cached state could not be resumed ({e})"));
    }
    let kept = checkpoints.into_iter().filter(|c| c.len <= at).collect();
    let from_checkpoint = checkpoint.map(|_| CheckpointResume { position: at, shared });
    Reuse { state: Some(state), reused: at, source, declined: None, from_checkpoint, checkpoints: kept }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cache::key::MediaSpan;

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
    fn untrimmable_state_resumes_from_the_latest_checkpoint_before_the_shared_prefix() {
        // Trimmable: anywhere.
        assert_eq!(resume_point(true, 100, &[], 40), (40, None));
        // Not trimmable: the whole entry (an exact continuation), else a checkpoint.
        assert_eq!(resume_point(false, 100, &[16, 32, 64], 100), (100, None));
        assert_eq!(resume_point(false, 100, &[16, 32, 64], 63), (32, Some(1)));
        assert_eq!(resume_point(false, 100, &[16, 32, 64], 64), (64, Some(2)));
        assert_eq!(resume_point(false, 100, &[16, 32, 64], 10), (0, None));
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
