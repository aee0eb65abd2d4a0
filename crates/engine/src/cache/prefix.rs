//! The prefix ("session") cache: each finished sequence's state, kept under its identity so
//! the next request that starts the same way prefills only what is new.
//!
//! Identity is `key::PrefixKey`. A request takes the entry sharing the longest prefix with it,
//! cut back to that point (shared with the cache; a request that continues the whole entry
//! moves it out, and puts its own back when it ends). State that cannot be cut back (rotating
//! windows, recurrent layers) resumes instead from the latest of the entry's checkpoints at or
//! before the shared prefix.
//!
//! Full keys/values are held in pages (`state::paged`) shared between entries: the entry a
//! regenerate or an edit leaves shares the pages before the point where it diverged with the
//! entry it branched from. Memory is counted with each page once.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use crate::cache::disk::DiskTier;
use crate::cache::key::{resume_point, PrefixKey};
use crate::state::{CachedState, Checkpoint, PageCount, SequenceState};

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
    /// Full keys/values held in shared pages; off: each entry keeps its row's buffers whole
    /// (no sharing between branches; kept to measure the difference).
    pub paged: bool,
}

impl Default for PrefixOptions {
    fn default() -> Self {
        use crate::defaults::{PREFIX_CACHE_DISK_MIB, PREFIX_CACHE_MEMORY_MIB};
        Self {
            enabled: true,
            memory_budget: PREFIX_CACHE_MEMORY_MIB << 20,
            disk_budget: PREFIX_CACHE_DISK_MIB << 20,
            dir: None,
            paged: true,
        }
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
    /// Bytes of cached state copied for this request: pages assembled into the row's
    /// buffers, and buffers it shares with the cache (MLX copies those at the first write).
    pub copied_bytes: usize,
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
        Reuse {
            state: None,
            reused: 0,
            source: ReuseSource::None,
            declined: Some(why.into()),
            from_checkpoint: None,
            checkpoints: vec![],
            copied_bytes: 0,
        }
    }
}

struct Entry {
    key: PrefixKey,
    state: CachedState,
    checkpoints: Vec<Checkpoint>,
    last_used: Instant,
    /// Bytes held outside shared pages.
    own_bytes: usize,
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
                Some((state, checkpoints)) => {
                    resume(CachedState::whole(state), checkpoints, disk.at, disk.checkpoint, disk.shared, ReuseSource::Disk, true)
                }
                None => Reuse::none("the disk entry was unreadable and has been removed"),
            },
            // A request that continues the whole entry takes it: the entry would be replaced
            // by the request's own when it ends, and a state held once is extended in place
            // (MLX writes into an array only it holds; a shared one is copied whole, keys and
            // values of every cached position, at the first new token).
            (Some((i, at, checkpoint, shared)), _) if at > 0 && at == self.entries[i].key.tokens.len() => {
                let entry = self.entries.remove(i);
                resume(entry.state, entry.checkpoints, at, checkpoint, shared, ReuseSource::Memory, true)
            }
            (Some((i, at, checkpoint, shared)), _) if at > 0 => {
                let entry = &mut self.entries[i];
                entry.last_used = Instant::now();
                resume(entry.state.clone(), entry.checkpoints.clone(), at, checkpoint, shared, ReuseSource::Memory, false)
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
        let started = Instant::now();
        let (state, copied) = match CachedState::keep(state, self.options.paged) {
            Ok(kept) => kept,
            Err(e) => return tracing::warn!("a finished conversation was not cached: its state could not be paged ({e})"),
        };
        let own_bytes = state.own_bytes() + checkpoints.iter().map(Checkpoint::nbytes).sum::<usize>();
        self.entries.push(Entry { key, state, checkpoints, last_used: Instant::now(), own_bytes, persisted: false });
        self.evict_to_budget();
        tracing::debug!(
            copied_bytes = copied,
            copy_ms = started.elapsed().as_secs_f64() * 1e3,
            held_bytes = self.memory_bytes(),
            entries = self.entries.len(),
            "prefix cache kept a conversation"
        );
    }

    fn evict_to_budget(&mut self) {
        while self.memory_bytes() > self.options.memory_budget && !self.entries.is_empty() {
            let oldest = (0..self.entries.len()).min_by_key(|&i| self.entries[i].last_used).expect("non-empty");
            let entry = self.entries.remove(oldest);
            self.persist(&entry);
        }
    }

    fn persist(&mut self, entry: &Entry) {
        if let (Some(disk), false) = (self.disk.as_mut(), entry.persisted) {
            match entry.state.clone().resume(entry.state.len(), true) {
                Ok((state, _)) => disk.store(&entry.key, &state, &entry.checkpoints),
                Err(e) => tracing::warn!("a conversation was not written to disk: {e}"),
            }
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

    /// Bytes held in memory, each shared page once.
    pub fn memory_bytes(&self) -> usize {
        let mut pages = PageCount::default();
        self.entries.iter().for_each(|e| pages.add_state(&e.state));
        pages.bytes + self.entries.iter().map(|e| e.own_bytes).sum::<usize>()
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

/// A cached state taken to `at`: cut back, or restored from checkpoint `checkpoint`. `owned`:
/// nothing else holds it (taken out of the cache, or read from disk).
fn resume(
    cached: CachedState,
    checkpoints: Vec<Checkpoint>,
    at: usize,
    checkpoint: Option<usize>,
    shared: usize,
    source: ReuseSource,
    owned: bool,
) -> Reuse {
    let (mut state, copied_bytes) = match cached.resume(at, owned) {
        Ok(resumed) => resumed,
        Err(e) => return Reuse::none(&format!("the cached state could not be resumed ({e})")),
    };
    let restored = match checkpoint {
        Some(i) => state.restore(&checkpoints[i]),
        None => state.trim(at),
    };
    if let Err(e) = restored {
        return Reuse::none(&format!("the cached state could not be resumed ({e})"));
    }
    let kept = checkpoints.into_iter().filter(|c| c.len <= at).collect();
    let from_checkpoint = checkpoint.map(|_| CheckpointResume { position: at, shared });
    Reuse { state: Some(state), reused: at, source, declined: None, from_checkpoint, checkpoints: kept, copied_bytes }
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

    /// A sequence of `tokens.len()` positions whose keys are the tokens (so that a branch's
    /// keys differ where its tokens do).
    fn state_of(tokens: &[u32], from: Option<SequenceState>) -> SequenceState {
        let mut state = from.unwrap_or_else(|| SequenceState::new(&[crate::state::StateKind::KeysValues]));
        let done = state.len();
        let new: Vec<f32> = tokens[done..].iter().flat_map(|&t| [t as f32; 16]).collect();
        let keys = mlx_rs::Array::from_slice(&new, &[1, 1, (tokens.len() - done) as i32, 16]);
        state.layers[0].keys_values_mut().unwrap().append(keys.clone(), keys).unwrap();
        state
    }

    #[test]
    fn a_regenerate_shares_the_pages_of_the_prompt() {
        use crate::state::PAGE;
        let position_bytes = 2 * 16 * 4;
        for paged in [true, false] {
            let mut cache = PrefixCache::new(PrefixOptions { paged, ..Default::default() });
            let prompt: Vec<u32> = (0..3 * PAGE as u32 + 40).collect();
            let first: Vec<u32> = prompt.iter().copied().chain([7; 20]).collect();
            cache.insert(key(&first, &[]), state_of(&first, None), vec![]);
            // The regenerate: the same prompt, another reply.
            let reuse = cache.lookup(&key(&prompt, &[]), &|n| n);
            assert_eq!(reuse.reused, prompt.len() - 1);
            let again: Vec<u32> = prompt.iter().copied().chain([9; 20]).collect();
            let branch = state_of(&again, Some(reuse.state.unwrap()));
            cache.insert(key(&again, &[]), branch, vec![]);
            assert_eq!(cache.len(), 2);
            if paged {
                // The first entry's buffers, which the branch shares until its first write.
                assert_eq!(reuse.copied_bytes, 4 * PAGE * position_bytes);
                // The first entry's buffers (its pages view them), and the branch's own tail:
                // it shares the first's 3 pages.
                assert_eq!(cache.memory_bytes(), (4 * PAGE + 60) * position_bytes);
            } else {
                // The first entry's buffers (grown in steps of a page), shared until the first write.
                assert_eq!(reuse.copied_bytes, 4 * PAGE * position_bytes);
                assert_eq!(cache.memory_bytes(), 2 * 4 * PAGE * position_bytes);
            }
            // Either way the branch reads back as it was computed.
            let back = cache.lookup(&key(&again.iter().copied().chain([1]).collect::<Vec<_>>(), &[]), &|n| n);
            let (keys, _) = back.state.unwrap().layers[0].keys_values_mut().unwrap().valid().unwrap();
            let want = state_of(&again, None).layers[0].keys_values_mut().unwrap().valid().unwrap().0;
            assert!(mlx_rs::ops::array_eq(&keys, &want, false).unwrap().item_exact::<bool>());
        }
    }

    #[test]
    fn a_continued_conversation_copies_nothing() {
        for paged in [true, false] {
            let mut cache = PrefixCache::new(PrefixOptions { paged, ..Default::default() });
            let first: Vec<u32> = (0..200).collect(); // less than a page: its tail views its buffer
            cache.insert(key(&first, &[]), state_of(&first, None), vec![]);
            assert_eq!(cache.memory_bytes(), 256 * 2 * 16 * 4);
            let next: Vec<u32> = (0..310).collect();
            let reuse = cache.lookup(&key(&next, &[]), &|n| n);
            assert_eq!((reuse.reused, reuse.copied_bytes, cache.len()), (200, 0, 0), "taken whole, its buffers kept");
            let next = state_of(&next, reuse.state);
            cache.insert(key(&(0..310).collect::<Vec<_>>(), &[]), next, vec![]);
            // The same buffer, grown by a step past the 200 positions it held.
            assert_eq!(cache.memory_bytes(), (200 + 256) * 2 * 16 * 4);
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
