//! Paged keys/values: how the prefix cache holds a keys/values layer, full or quantized
//! (`Pageable`: both are buffers along one position axis, two parts or six). Its positions are
//! cut into fixed-size immutable pages shared by reference (`Rc`) between the cache's entries
//! and the rows that resumed from them, so a regenerate or an edit shares the pages before
//! the point where it diverges instead of keeping a second copy of them.
//!
//! Attention reads a row's keys contiguously (MLX's fused kernel, our CPU kernel), so a row
//! still works on one private buffer that it appends to in place. When a row that started
//! from nothing shared ends, its pages are views of its buffer (nothing is copied) and the
//! buffer stays with them ([`Backing`]); a request that continues the whole conversation
//! takes that buffer back and appends in place, as before paging. A branch (a regenerate, an
//! edit: a request resuming inside a conversation that stays cached) starts from the buffer
//! its pages view (MLX copies it at the first write, as before paging) or, where they view no
//! one buffer, assembles its own from the pages once ([`Pageable::from_pages`]), and it
//! remembers which pages its first positions came from; when it ends, only the positions past
//! them are copied into new pages ([`Pageable::page_out`]) and the shared ones are referenced
//! again.
//! A page holds exactly the values it was cut from, so a state assembled from pages is
//! bit-identical to the contiguous one it came from.

use std::collections::HashSet;
use std::rc::Rc;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use super::page::{Backing, Page, PAGE};
use super::{own_copy, Checkpoint, KeysValues, LayerState, Packed, PositionShift, QuantizedKeysValues, SequenceState, StateKind};
use crate::error::Result;

/// A keys/values layer in pages: `pages` hold the first `pages.len() * PAGE` positions,
/// `tail` the rest (fewer than `PAGE`). With `backing`, every one of them is a view of it.
/// `kind` says how the parts read back: full keys/values or quantized ones.
#[derive(Clone)]
pub struct PagedKeysValues {
    pub kind: StateKind,
    pub pages: Vec<Rc<Page>>,
    pub tail: Option<Vec<Array>>,
    pub len: usize,
    pub backing: Option<Rc<Backing>>,
}

impl PagedKeysValues {
    fn empty(kind: StateKind) -> Self {
        Self { kind, pages: vec![], tail: None, len: 0, backing: None }
    }

    /// Bytes held by the tail alone (pages and backings are counted once across entries by
    /// [`PageCount`]).
    pub fn tail_bytes(&self) -> usize {
        match (&self.tail, &self.backing) {
            (Some(parts), None) => parts.iter().map(Array::nbytes).sum(),
            _ => 0,
        }
    }
}

/// Bytes held by pages, each page (or the buffer it views) counted once however many
/// entries and rows share it.
#[derive(Default)]
pub struct PageCount {
    seen: HashSet<usize>,
    pub bytes: usize,
}

impl PageCount {
    pub fn add(&mut self, page: &Rc<Page>) {
        match &page.backing {
            Some(backing) => self.add_backing(backing),
            None if self.seen.insert(Rc::as_ptr(page) as usize) => self.bytes += page.nbytes(),
            None => {}
        }
    }

    pub fn add_backing(&mut self, backing: &Rc<Backing>) {
        if self.seen.insert(Rc::as_ptr(backing) as usize) {
            self.bytes += backing.nbytes();
        }
    }

    /// A cached state's pages and the buffers they (or its tails) view.
    pub fn add_state(&mut self, state: &CachedState) {
        for layer in &state.layers {
            if let CachedLayer::Paged(p) = layer {
                p.pages.iter().for_each(|page| self.add(page));
                p.backing.iter().for_each(|b| self.add_backing(b));
            }
        }
    }
}

/// A layer whose positions can be paged: its buffers are [B, kv_heads, capacity, ·] arrays
/// (its keys' parts, then its values'), positions along axis 2, grown a page at a time.
/// Full and quantized keys/values page alike; only their parts differ.
pub trait Pageable: Sized {
    fn kind(&self) -> StateKind;
    /// The whole buffers, once there are any.
    fn buffers(&self) -> Option<Vec<Array>>;
    fn positions(&self) -> usize;
    /// The pages the first positions were assembled from (same values): when the row ends
    /// they are shared again instead of cut anew.
    fn pages(&self) -> &[Rc<Page>];
    /// From now on the layer counts as sharing no pages (its end is paged as views of its
    /// own buffers).
    fn forget_pages(&mut self);
    /// A layer of `kind` holding `buffers` of which the first `len` positions are valid,
    /// assembled from `pages`.
    fn assembled(kind: StateKind, buffers: Vec<Array>, len: usize, pages: Vec<Rc<Page>>) -> Self;

    /// A row's layer resuming at `at` (at most `paged.len`): the pages before `at` and the
    /// part of the next one (or the tail) assembled into one buffer per part with room for the
    /// next positions. Returns the layer and the bytes copied.
    fn from_pages(paged: &PagedKeysValues, at: usize) -> Result<(Self, usize)> {
        let full = (at / PAGE).min(paged.pages.len());
        if let Some(backing) = paged.backing.as_ref().filter(|_| at > 0) {
            // Pages viewing one buffer: the row shares the buffer itself, cut back to `at`, and
            // MLX copies it whole at the first write (one contiguous copy, faster than joining
            // the pages; as a branch did before paging).
            let pages = paged.pages[..full].to_vec();
            return Ok((Self::assembled(paged.kind, backing.parts.clone(), at, pages), backing.nbytes()));
        }
        if at == 0 {
            return Ok((Self::assembled(paged.kind, vec![], 0, vec![]), 0));
        }
        let partial = at - full * PAGE;
        let mut pieces: Vec<Vec<Array>> = vec![];
        for page in &paged.pages[..full] {
            pieces.push(page.parts.clone());
        }
        if partial > 0 {
            let parts = match paged.pages.get(full) {
                Some(page) => &page.parts,
                None => paged.tail.as_ref().expect("a paged layer's tail holds the positions past its pages"),
            };
            pieces.push(parts.iter().map(|a| a.index((.., .., ..partial as i32, ..))).collect());
        }
        // Room for the next positions now, so the first write is in place (not a second copy).
        let room = (KeysValues::capacity_for(at + 1) - at) as i32;
        let mut buffers = Vec::with_capacity(pieces[0].len());
        for part in 0..pieces[0].len() {
            let first = &pieces[0][part];
            let zeros = ops::zeros_dtype(&[first.dim(0), first.dim(1), room, first.dim(3)], first.dtype())?;
            let mut joined: Vec<&Array> = pieces.iter().map(|p| &p[part]).collect();
            joined.push(&zeros);
            buffers.push(ops::concatenate(&joined, 2)?);
        }
        let bytes: usize = buffers.iter().map(Array::nbytes).sum();
        let copied = bytes / (at + room as usize) * at;
        Ok((Self::assembled(paged.kind, buffers, at, paged.pages[..full].to_vec()), copied))
    }

    /// A row's layer resuming at `at` from pages nothing else holds (the entry was taken out
    /// of the cache): the buffers they view, when they view some, cut back to `at` and
    /// appended to in place; assembled otherwise. The row then shares no pages, so that its
    /// own end is paged as views of its buffers again. Returns the layer and the bytes copied
    /// (buffers still viewed by other entries' pages are copied by MLX at the first write).
    fn from_own_pages(paged: PagedKeysValues, at: usize) -> Result<(Self, usize)> {
        let Some(backing) = paged.backing.clone() else {
            let (mut assembled, copied) = Self::from_pages(&paged, at)?;
            assembled.forget_pages();
            return Ok((assembled, copied));
        };
        let kind = paged.kind;
        drop(paged); // its views, so that the buffers are held once where no other entry views them
        let (parts, copied) = match Rc::try_unwrap(backing) {
            Ok(Backing { parts }) => (parts, 0),
            Err(shared) => (shared.parts.clone(), shared.nbytes()),
        };
        Ok((Self::assembled(kind, parts, at, vec![]), copied))
    }

    /// The layer in pages: the pages it was assembled from, new pages cut from its buffers
    /// past them, and the rest as the tail. A row that shares no pages keeps its buffers and
    /// its pages view them (nothing copied); otherwise only what is new is copied into pages
    /// of their own. Returns them and the bytes copied.
    fn page_out(&self) -> Result<(PagedKeysValues, usize)> {
        let len = self.positions();
        let Some(buffers) = self.buffers().filter(|_| len > 0) else { return Ok((PagedKeysValues::empty(self.kind()), 0)) };
        let kind = self.kind();
        if self.pages().is_empty() {
            let backing = Rc::new(Backing { parts: buffers });
            let view = |from: usize, to: usize| -> Vec<Array> {
                backing.parts.iter().map(|a| a.index((.., .., from as i32..to as i32, ..))).collect()
            };
            let pages =
                (0..len / PAGE).map(|i| Rc::new(Page { parts: view(i * PAGE, (i + 1) * PAGE), backing: Some(backing.clone()) })).collect();
            let full = len / PAGE * PAGE;
            let tail = (len > full).then(|| view(full, len));
            return Ok((PagedKeysValues { kind, pages, tail, len, backing: Some(backing) }, 0));
        }
        let mut pages = self.pages().to_vec();
        let mut copied = 0;
        let mut fresh = vec![];
        let cut = |from: usize, to: usize| -> Result<Vec<Array>> {
            buffers.iter().map(|a| own_copy(&a.index((.., .., from as i32..to as i32, ..)))).collect()
        };
        for i in pages.len()..len / PAGE {
            let page = Page { parts: cut(i * PAGE, (i + 1) * PAGE)?, backing: None };
            copied += page.nbytes();
            fresh.extend(page.parts.iter().cloned());
            pages.push(Rc::new(page));
        }
        let full = pages.len() * PAGE;
        let tail = if len > full { Some(cut(full, len)?) } else { None };
        if let Some(parts) = &tail {
            copied += parts.iter().map(Array::nbytes).sum::<usize>();
            fresh.extend(parts.iter().cloned());
        }
        // Computed now, so that the row's buffers they were cut from can be freed.
        mlx_rs::transforms::eval(&fresh)?;
        Ok((PagedKeysValues { kind, pages, tail, len, backing: None }, copied))
    }
}

impl Pageable for KeysValues {
    fn kind(&self) -> StateKind {
        StateKind::KeysValues
    }

    fn buffers(&self) -> Option<Vec<Array>> {
        Some(vec![self.keys.clone()?, self.values.clone()?])
    }

    fn positions(&self) -> usize {
        self.len
    }

    fn pages(&self) -> &[Rc<Page>] {
        &self.pages
    }

    fn forget_pages(&mut self) {
        self.pages.clear();
    }

    fn assembled(_: StateKind, buffers: Vec<Array>, len: usize, pages: Vec<Rc<Page>>) -> Self {
        let mut buffers = buffers.into_iter();
        Self { keys: buffers.next(), values: buffers.next(), len, pages }
    }
}

impl Pageable for QuantizedKeysValues {
    fn kind(&self) -> StateKind {
        StateKind::QuantizedKeysValues(self.quantization)
    }

    fn buffers(&self) -> Option<Vec<Array>> {
        let (k, v) = (self.keys.as_ref()?, self.values.as_ref()?);
        Some([k.arrays(), v.arrays()].into_iter().flatten().cloned().collect())
    }

    fn positions(&self) -> usize {
        self.len
    }

    fn pages(&self) -> &[Rc<Page>] {
        &self.pages
    }

    fn forget_pages(&mut self) {
        self.pages.clear();
    }

    fn assembled(kind: StateKind, buffers: Vec<Array>, len: usize, pages: Vec<Rc<Page>>) -> Self {
        let StateKind::QuantizedKeysValues(quantization) = kind else { unreachable!("pages of quantized keys/values say so") };
        let mut parts = buffers.into_iter();
        let mut packed = || Some(Packed { data: parts.next()?, scales: parts.next()?, biases: parts.next()? });
        let (keys, values) = (packed(), packed());
        Self { quantization, keys, values, len, pages }
    }
}

/// A paged layer resumed at `at` as a row's layer of its kind.
fn resume_pages<T: Pageable>(paged: PagedKeysValues, at: usize, owned: bool, wrap: fn(T) -> LayerState) -> Result<(LayerState, usize)> {
    let (layer, copied) = if owned { T::from_own_pages(paged, at)? } else { T::from_pages(&paged, at)? };
    Ok((wrap(layer), copied))
}

/// A layer as the prefix cache holds it: full keys/values in pages, any other kind whole.
#[derive(Clone)]
pub enum CachedLayer {
    Paged(PagedKeysValues),
    Whole(LayerState),
}

impl CachedLayer {
    pub fn kind(&self) -> StateKind {
        match self {
            Self::Paged(p) => p.kind,
            Self::Whole(l) => l.kind(),
        }
    }

    pub fn len(&self) -> usize {
        match self {
            Self::Paged(p) => p.len,
            Self::Whole(l) => l.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A sequence's state as the prefix cache holds it.
#[derive(Clone)]
pub struct CachedState {
    pub layers: Vec<CachedLayer>,
    pub position_shifts: Vec<PositionShift>,
}

impl CachedState {
    /// A finished row's state for the cache, and the bytes copied: its keys/values layers
    /// (full or quantized) in pages when `paged` (sharing the pages it was assembled from),
    /// every layer whole otherwise (as the row left it: its buffers are kept, nothing is
    /// copied).
    pub fn keep(state: SequenceState, paged: bool) -> Result<(Self, usize)> {
        let mut copied = 0;
        let mut layers = Vec::with_capacity(state.layers.len());
        for layer in state.layers {
            layers.push(match layer {
                LayerState::KeysValues(kv) if paged => {
                    let (p, n) = kv.page_out()?;
                    copied += n;
                    CachedLayer::Paged(p)
                }
                LayerState::QuantizedKeysValues(kv) if paged => {
                    let (p, n) = kv.page_out()?;
                    copied += n;
                    CachedLayer::Paged(p)
                }
                other => CachedLayer::Whole(other),
            });
        }
        Ok((Self { layers, position_shifts: state.position_shifts }, copied))
    }

    /// A state with every layer whole (read from disk: resumed at once, not kept).
    pub fn whole(state: SequenceState) -> Self {
        Self { layers: state.layers.into_iter().map(CachedLayer::Whole).collect(), position_shifts: state.position_shifts }
    }

    /// A row's state resuming at `at` (at most `len()`; layers that cannot be cut back must be
    /// restored from a checkpoint after): pages assembled, whole layers shared (MLX copies a
    /// shared buffer at its first write, so they count as copied unless `owned`: the entry
    /// was taken out of the cache and nothing else holds them).
    pub fn resume(self, at: usize, owned: bool) -> Result<(SequenceState, usize)> {
        let mut copied = 0;
        let mut layers = Vec::with_capacity(self.layers.len());
        for layer in self.layers {
            layers.push(match layer {
                CachedLayer::Paged(p) => {
                    let (layer, n) = match p.kind {
                        StateKind::QuantizedKeysValues(_) => resume_pages(p, at, owned, LayerState::QuantizedKeysValues)?,
                        _ => resume_pages(p, at, owned, LayerState::KeysValues)?,
                    };
                    copied += n;
                    layer
                }
                CachedLayer::Whole(l) => {
                    if !owned {
                        copied += l.nbytes();
                    }
                    l
                }
            });
        }
        Ok((SequenceState::from_parts(layers, self.position_shifts), copied))
    }

    /// Positions seen (the same in every layer).
    pub fn len(&self) -> usize {
        self.layers.first().map_or(0, CachedLayer::len)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn trimmable(&self) -> bool {
        self.layers.iter().all(|l| l.kind().trimmable())
    }

    pub fn kinds(&self) -> Vec<StateKind> {
        self.layers.iter().map(CachedLayer::kind).collect()
    }

    /// The layers that cannot be trimmed, as they are now (see `SequenceState::checkpoint`).
    pub fn checkpoint(&self) -> Option<Checkpoint> {
        let layers: Vec<(usize, LayerState)> = self
            .layers
            .iter()
            .enumerate()
            .filter_map(|(i, l)| match l {
                CachedLayer::Whole(s) if !s.kind().trimmable() => Some((i, s.clone())),
                _ => None,
            })
            .collect();
        (!layers.is_empty()).then(|| Checkpoint { len: self.len(), layers })
    }

    /// Bytes held outside pages.
    pub fn own_bytes(&self) -> usize {
        self.layers
            .iter()
            .map(|l| match l {
                CachedLayer::Paged(p) => p.tail_bytes(),
                CachedLayer::Whole(s) => s.nbytes(),
            })
            .sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same(a: &Array, b: &Array) -> bool {
        a.shape() == b.shape() && ops::array_eq(a, b, true).unwrap().item_exact::<bool>()
    }

    fn filled(len: usize) -> KeysValues {
        let mut kv = KeysValues::default();
        let keys = mlx_rs::random::normal::<f32>(&[1, 2, len as i32, 8], None, None, None).unwrap();
        let values = mlx_rs::random::normal::<f32>(&[1, 2, len as i32, 8], None, None, None).unwrap();
        kv.append(keys, values).unwrap();
        kv
    }

    #[test]
    fn pages_assemble_bit_identical_at_every_cut() {
        let kv = filled(2 * PAGE + 37);
        let (backed, copied) = kv.page_out().unwrap();
        assert_eq!((backed.pages.len(), backed.len), (2, 2 * PAGE + 37));
        let position_bytes = 2 * 2 * 8 * 4; // keys and values, 2 heads of 8 floats
        assert_eq!(copied, 0, "a row that shares no pages is paged as views of its buffer");
        assert!(backed.backing.is_some() && backed.pages.iter().all(|p| p.backing.is_some()));
        // Pages that view no one buffer (a branch's) are joined.
        let joined = PagedKeysValues { backing: None, ..backed.clone() };
        let (keys, values) = kv.valid().unwrap();
        let cuts = [1, 36, PAGE - 1, PAGE, PAGE + 1, 2 * PAGE, 2 * PAGE + 36, 2 * PAGE + 37];
        for (paged, at) in cuts.into_iter().flat_map(|at| [(&backed, at), (&joined, at)]) {
            let (resumed, copied) = KeysValues::from_pages(paged, at).unwrap();
            let want_copied = if paged.backing.is_some() { 3 * PAGE * position_bytes } else { at * position_bytes };
            assert_eq!((resumed.len(), copied), (at, want_copied));
            assert_eq!(resumed.pages().len(), at / PAGE);
            let (k, v) = resumed.valid().unwrap();
            assert!(same(&k, &keys.index((.., .., ..at as i32, ..))), "keys at {at}");
            assert!(same(&v, &values.index((.., .., ..at as i32, ..))), "values at {at}");
        }
    }

    #[test]
    fn a_branch_shares_the_pages_before_it_and_copies_only_what_is_new() {
        let (original, _) = filled(3 * PAGE + 10).page_out().unwrap();
        let position_bytes = 2 * 2 * 8 * 4;
        // An edit at 2 * PAGE + 5: the first two pages come back shared.
        let (mut row, _) = KeysValues::from_pages(&original, 2 * PAGE + 5).unwrap();
        let more = mlx_rs::random::normal::<f32>(&[1, 2, 300, 8], None, None, None).unwrap();
        row.append(more.clone(), more).unwrap();
        let (branch, copied) = row.page_out().unwrap();
        assert_eq!(branch.len, 2 * PAGE + 305);
        assert!(Rc::ptr_eq(&branch.pages[0], &original.pages[0]) && Rc::ptr_eq(&branch.pages[1], &original.pages[1]));
        assert!(!Rc::ptr_eq(&branch.pages[2], &original.pages[2]), "page 2 holds the edit");
        assert_eq!(copied, (PAGE + 49) * position_bytes, "only the page past the shared ones and the tail");
        assert!(branch.backing.is_none() && branch.pages[2].backing.is_none());
        let mut count = PageCount::default();
        original.pages.iter().chain(&branch.pages).for_each(|p| count.add(p));
        original.backing.iter().for_each(|b| count.add_backing(b));
        // The original's buffer (grown to 4 pages) once, and the branch's new page.
        assert_eq!(count.bytes, 5 * PAGE * position_bytes);
        assert_eq!(branch.tail_bytes(), 49 * position_bytes);
        // Cutting a row back below a page lets it go.
        row.truncate(PAGE + 3);
        assert_eq!(row.pages().len(), 1);
    }

    #[test]
    fn quantized_keys_values_page_and_share_alike() {
        let q = crate::state::KvQuantization::new(4, 64).unwrap();
        let mut kv = QuantizedKeysValues::new(q);
        let keys = mlx_rs::random::normal::<f32>(&[1, 2, (3 * PAGE + 10) as i32, 64], None, None, None).unwrap();
        kv.append(&keys, &keys).unwrap();
        let (original, copied) = kv.page_out().unwrap();
        assert_eq!((original.pages.len(), original.kind, copied), (3, StateKind::QuantizedKeysValues(q), 0));
        assert_eq!(original.pages[0].parts.len(), 6, "data, scales and biases of keys and values");
        // An edit inside page 2: pages 0 and 1 come back shared, and read as the row held them.
        let at = 2 * PAGE + 5;
        let joined = PagedKeysValues { backing: None, ..original.clone() };
        let (mut row, _) = QuantizedKeysValues::from_pages(&joined, at).unwrap();
        let (want, _) = kv.valid().unwrap();
        let (got, _) = row.valid().unwrap();
        for (a, b) in got.arrays().into_iter().zip(want.arrays()) {
            assert!(same(a, &b.index((.., .., ..at as i32, ..))));
        }
        let more = mlx_rs::random::normal::<f32>(&[1, 2, 300, 64], None, None, None).unwrap();
        row.append(&more, &more).unwrap();
        let (branch, copied) = row.page_out().unwrap();
        assert!(Rc::ptr_eq(&branch.pages[0], &original.pages[0]) && Rc::ptr_eq(&branch.pages[1], &original.pages[1]));
        let position_bytes = 2 * 2 * q.bytes_per_head(64, 4);
        assert_eq!(copied, (PAGE + 49) * position_bytes, "only the page past the shared ones and the tail");
    }

    /// Where a layer's key buffer lives, once computed.
    fn address(kv: &KeysValues) -> usize {
        let keys = kv.keys.as_ref().unwrap();
        keys.eval().unwrap();
        keys.as_slice::<f32>().as_ptr() as usize
    }

    #[test]
    fn an_assembled_row_appends_in_place() {
        let one = || mlx_rs::random::normal::<f32>(&[1, 2, 1, 8], None, None, None).unwrap();
        for (owned, joined) in [(false, false), (false, true), (true, false)] {
            // Owned: the pages of a conversation nothing else holds (its buffer comes back).
            // Joined: pages that view no one buffer.
            let (mut paged, _) = filled(2 * PAGE + 30).page_out().unwrap();
            if joined {
                paged.backing = None;
            }
            let (mut row, copied) = if owned {
                KeysValues::from_own_pages(paged, PAGE + 7).unwrap()
            } else {
                KeysValues::from_pages(&paged, PAGE + 7).unwrap()
            };
            assert_eq!(copied == 0, owned);
            if !owned && !joined {
                // Sharing the cached buffer: the first write copies it, the next ones do not.
                let shared = address(&row);
                row.append(one(), one()).unwrap();
                assert_ne!(address(&row), shared);
            }
            let before = address(&row);
            for _ in 0..3 {
                row.append(one(), one()).unwrap();
            }
            assert_eq!(address(&row), before, "owned {owned}: written in place, not copied");
        }
    }

    #[test]
    fn a_conversation_taken_whole_gets_its_buffer_back() {
        let kv = filled(PAGE + 20);
        let (paged, _) = kv.page_out().unwrap();
        let (keys, _) = kv.valid().unwrap();
        drop(kv);
        let (row, copied) = KeysValues::from_own_pages(paged.clone(), PAGE + 20).unwrap();
        // Another holder of the pages: MLX copies the buffer at the first write.
        assert_eq!(copied, 2 * PAGE * 2 * 2 * 8 * 4);
        drop(row);
        let (row, copied) = KeysValues::from_own_pages(paged, PAGE + 20).unwrap();
        assert_eq!((copied, row.len(), row.pages().len()), (0, PAGE + 20, 0));
        assert!(same(&row.valid().unwrap().0, &keys));
    }
}
