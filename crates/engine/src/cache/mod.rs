//! Caches: per-sequence KV state (and, later, prefix sessions, encoder outputs, a disk tier).

pub mod kv;

pub use kv::{KvCache, LayerKv};
