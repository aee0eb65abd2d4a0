//! A page: a fixed run of positions of one full keys/values layer, immutable and shared by
//! reference between the prefix cache's entries and rows (see `paged`).

use std::rc::Rc;

use mlx_rs::Array;

/// Positions per page: the step keys/values buffers grow by.
pub const PAGE: usize = 256;

/// `PAGE` positions of one layer's keys and values, [B, kv_heads, PAGE, head_dim] each:
/// buffers of their own, or views of a finished row's buffer (`backing`). Never changed.
pub struct Page {
    pub keys: Array,
    pub values: Array,
    pub backing: Option<Rc<Backing>>,
}

/// A finished row's whole buffers, [B, kv_heads, capacity, head_dim], that pages view.
pub struct Backing {
    pub keys: Array,
    pub values: Array,
}

impl Backing {
    pub fn nbytes(&self) -> usize {
        self.keys.nbytes() + self.values.nbytes()
    }
}

impl Page {
    /// The page's own bytes (a view's memory is its backing's).
    pub fn nbytes(&self) -> usize {
        self.keys.nbytes() + self.values.nbytes()
    }
}
