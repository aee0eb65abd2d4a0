//! Full keys and values: every position a layer has seen, grown in steps. Trimmable to any
//! shorter prefix (a position's keys never depend on later ones).

use std::rc::Rc;

use mlx_rs::ops::indexing::{IndexOp, TryIndexMutOp};
use mlx_rs::{ops, Array, Dtype};

use super::page::{Page, PAGE};
use crate::error::Result;

/// Buffers grow by this many positions at a time, so a decode step writes in place instead
/// of concatenating (which would copy the whole cache every token).
const STEP: usize = PAGE;

/// Cloning is cheap (arrays are shared) and safe: MLX arrays are immutable, so appending to a
/// clone never changes the original.
#[derive(Default, Clone)]
pub struct KeysValues {
    /// [B, kv_heads, capacity, head_dim]; the first `len` positions are valid.
    pub(super) keys: Option<Array>,
    pub(super) values: Option<Array>,
    pub(super) len: usize,
    /// The prefix cache's pages the first positions were assembled from (same values): when
    /// the row ends they are shared again instead of cut anew (`paged`).
    pub(super) pages: Vec<Rc<Page>>,
}

impl KeysValues {
    /// Positions the buffers grow by: the scheduler reserves memory for a reply without a
    /// token limit in these steps too, so that a reservation covers what the buffers hold.
    pub const GROWTH_STEP: usize = STEP;

    /// Positions a layer's buffers hold once it has seen `positions` (they grow in steps).
    pub fn capacity_for(positions: usize) -> usize {
        positions.div_ceil(STEP) * STEP
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Store new keys/values [B, kv_heads, L, head_dim]; return everything cached so far.
    pub fn append(&mut self, k: Array, v: Array) -> Result<(Array, Array)> {
        let l = k.dim(2) as usize;
        let (start, end) = (self.len, self.len + l);
        self.reserve(l, [k.dim(0), k.dim(1), k.dim(3)], k.dtype())?;
        let (keys, values) = (self.keys.as_mut().unwrap(), self.values.as_mut().unwrap());
        let range = start as i32..end as i32;
        keys.try_index_mut((.., .., range.clone(), ..), &k)?;
        values.try_index_mut((.., .., range, ..), &v)?;
        self.len = end;
        Ok((keys.index((.., .., ..end as i32, ..)), values.index((.., .., ..end as i32, ..))))
    }

    /// Room for `l` more positions of [batch, kv_heads, head_dim] (grown a step at a time).
    fn reserve(&mut self, l: usize, [b, heads, d]: [i32; 3], dtype: Dtype) -> Result<()> {
        let start = self.len;
        let capacity = self.keys.as_ref().map_or(0, |a| a.dim(2) as usize);
        if start + l > capacity {
            let grow = (l.div_ceil(STEP) * STEP) as i32;
            let extend = |old: Option<&Array>| -> Result<Array> {
                let fresh = ops::zeros_dtype(&[b, heads, grow, d], dtype)?;
                Ok(match old {
                    Some(old) => ops::concatenate(&[old.index((.., .., ..start as i32, ..)), fresh], 2)?,
                    None => fresh,
                })
            };
            self.keys = Some(extend(self.keys.as_ref())?);
            self.values = Some(extend(self.values.as_ref())?);
        }
        Ok(())
    }

    /// One more position (a decode step) written by `write(buffer, position, keys?)`, which
    /// returns the buffer with it (the CPU kernels' `cache_write`); the buffers grow first when
    /// full. The old buffers are dropped before the writes run, so an unshared buffer is
    /// written in place. Returns the whole buffers, [1, kv_heads, capacity, head_dim]; the
    /// first `len()` positions are valid.
    pub fn push_with(
        &mut self,
        kv_heads: i32,
        head_dim: i32,
        dtype: Dtype,
        write: impl Fn(&Array, usize, bool) -> Result<Array>,
    ) -> Result<(Array, Array)> {
        self.reserve(1, [1, kv_heads, head_dim], dtype)?;
        let position = self.len;
        for keys in [true, false] {
            let slot = if keys { &mut self.keys } else { &mut self.values };
            let old = slot.take().expect("reserved buffers");
            match write(&old, position, keys) {
                Ok(new) => *slot = Some(new),
                Err(e) => {
                    *slot = Some(old);
                    return Err(e);
                }
            }
        }
        self.len = position + 1;
        Ok((self.keys.clone().expect("written keys"), self.values.clone().expect("written values")))
    }

    /// The buffers' dtype and batch size, once there are buffers.
    pub fn layout(&self) -> Option<(Dtype, i32)> {
        self.keys.as_ref().map(|k| (k.dtype(), k.dim(0)))
    }

    /// Forget everything after the first `len` positions.
    pub fn truncate(&mut self, len: usize) {
        self.len = self.len.min(len);
        self.pages.truncate(self.len / PAGE);
    }

    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.keys.iter().chain(self.values.iter())
    }

    /// The valid part of the keys and values, [B, kv_heads, len, head_dim] each.
    pub fn valid(&self) -> Option<(Array, Array)> {
        let end = self.len as i32;
        Some((self.keys.as_ref()?.index((.., .., ..end, ..)), self.values.as_ref()?.index((.., .., ..end, ..))))
    }

    /// A layer holding exactly these keys and values (restored from disk).
    pub fn from_arrays(keys: Array, values: Array) -> Self {
        let len = keys.dim(2) as usize;
        Self { keys: Some(keys), values: Some(values), len, pages: vec![] }
    }

    /// A layer whose first `len` positions are these buffers' (restored from disk, with room
    /// past them to grow into).
    pub fn from_buffers(keys: Array, values: Array, len: usize) -> Self {
        Self { keys: Some(keys), values: Some(values), len, pages: vec![] }
    }

    /// Bytes held by the buffers (their capacity, not only the valid part).
    pub fn nbytes(&self) -> usize {
        self.arrays().map(Array::nbytes).sum()
    }
}
