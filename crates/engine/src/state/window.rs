//! A rotating window: a sliding-attention layer keeps only the keys and values its next query
//! can see (the last `size - 1` positions), so its memory is bounded however long the sequence.
//! It cannot be trimmed back (the positions it dropped are gone): prefix reuse restores it from
//! a checkpoint instead.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};

use crate::error::Result;

#[derive(Clone)]
pub struct RotatingWindow {
    /// Attention window: a query at position p sees keys at p - size + 1 ..= p.
    size: usize,
    /// [B, kv_heads, kept, head_dim], the last `kept ≤ size - 1` positions in order.
    keys: Option<Array>,
    values: Option<Array>,
    /// Positions seen.
    len: usize,
}

/// What a layer attends to after `RotatingWindow::append`.
pub struct WindowKeys {
    pub keys: Array,
    pub values: Array,
    /// Absolute position of the first key.
    pub start: usize,
}

impl RotatingWindow {
    pub fn new(size: usize) -> Self {
        Self { size: size.max(1), keys: None, values: None, len: 0 }
    }

    pub fn size(&self) -> usize {
        self.size
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Positions held.
    pub fn kept(&self) -> usize {
        self.keys.as_ref().map_or(0, |k| k.dim(2) as usize)
    }

    /// Adds keys/values [B, kv_heads, L, head_dim]; returns the held positions followed by the
    /// new ones (what this chunk's queries may see, subject to the window mask), then keeps
    /// only the last `size - 1`.
    pub fn append(&mut self, k: Array, v: Array) -> Result<WindowKeys> {
        let l = k.dim(2) as usize;
        let start = self.len - self.kept();
        let (keys, values) = match (&self.keys, &self.values) {
            (Some(old_k), Some(old_v)) => (ops::concatenate(&[old_k, &k], 2)?, ops::concatenate(&[old_v, &v], 2)?),
            _ => (k, v),
        };
        self.len += l;
        let total = keys.dim(2) as usize;
        let keep = total.min(self.size - 1);
        if keep == 0 {
            (self.keys, self.values) = (None, None);
        } else if keep == total {
            (self.keys, self.values) = (Some(keys.clone()), Some(values.clone()));
        } else {
            let from = (total - keep) as i32;
            let tail = |a: &Array| -> Result<Array> {
                let t = a.index((.., .., from.., ..));
                // A long chunk's tail is a small view of a large buffer: copy it, so what the
                // layer holds between calls is window-sized.
                Ok(if total > 2 * keep { super::own_copy(&t)? } else { t })
            };
            (self.keys, self.values) = (Some(tail(&keys)?), Some(tail(&values)?));
        }
        Ok(WindowKeys { keys, values, start })
    }

    pub fn arrays(&self) -> impl Iterator<Item = &Array> {
        self.keys.iter().chain(self.values.iter())
    }

    /// The held keys and values.
    pub fn held(&self) -> Option<(&Array, &Array)> {
        Some((self.keys.as_ref()?, self.values.as_ref()?))
    }

    /// A window restored from disk: `len` positions seen, these the last of them.
    pub fn from_arrays(size: usize, keys: Array, values: Array, len: usize) -> Self {
        Self { size: size.max(1), keys: Some(keys), values: Some(values), len }
    }

    pub fn nbytes(&self) -> usize {
        self.arrays().map(Array::nbytes).sum()
    }
}
