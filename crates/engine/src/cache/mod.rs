//! Caches: per-sequence KV state, the prefix (session) cache over it, the encoder cache of
//! vision/audio tower outputs, and their disk tiers (sharing `entries`).

pub mod disk;
pub mod encoder;
pub(crate) mod entries;
pub mod kv;
pub mod prefix;

pub use encoder::{EncoderCache, EncoderKey, EncoderLookup, EncoderOptions, EncoderSource, EncoderStats};
pub use kv::{KvCache, LayerKv};
pub use prefix::{MediaSpan, PrefixCache, PrefixKey, PrefixOptions, Reuse, ReuseSource};
