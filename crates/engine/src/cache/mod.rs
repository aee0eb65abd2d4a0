//! Caches: per-sequence KV state, the prefix (session) cache over it, and its disk tier (on
//! the shared `entries` files).

pub mod disk;
pub(crate) mod entries;
pub mod kv;
pub mod prefix;

pub use kv::{KvCache, LayerKv};
pub use prefix::{MediaSpan, PrefixCache, PrefixKey, PrefixOptions, Reuse, ReuseSource};
