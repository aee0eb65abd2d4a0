//! A page: a fixed run of positions of one keys/values layer (full or quantized), immutable
//! and shared by reference between the prefix cache's entries and rows (see `paged`).

use std::rc::Rc;

use mlx_rs::Array;

/// Positions per page: the step keys/values buffers grow by.
pub const PAGE: usize = 256;

/// `PAGE` positions of one layer's parts (its keys then its values: two arrays for full
/// keys/values, data, scales and biases each for quantized ones), [B, kv_heads, PAGE, ·] each:
/// arrays of their own, or views of a finished row's buffers (`backing`). Never changed.
pub struct Page {
    pub parts: Vec<Array>,
    pub backing: Option<Rc<Backing>>,
}

/// A finished row's whole buffers, [B, kv_heads, capacity, ·], that pages view.
pub struct Backing {
    pub parts: Vec<Array>,
}

impl Backing {
    pub fn nbytes(&self) -> usize {
        self.parts.iter().map(Array::nbytes).sum()
    }
}

impl Page {
    /// The page's own bytes (a view's memory is its backing's).
    pub fn nbytes(&self) -> usize {
        self.parts.iter().map(Array::nbytes).sum()
    }
}
