//! Caches: the prefix (session) cache of sequences' state (`crate::state`), the encoder cache
//! of vision/audio tower outputs, and their disk tiers (sharing `entries`).

pub mod disk;
pub mod encoder;
pub(crate) mod entries;
pub mod key;
pub mod prefix;
mod tensors;

pub use encoder::{EncoderCache, EncoderKey, EncoderLookup, EncoderOptions, EncoderSource, EncoderStats};
pub use key::{MediaSpan, PrefixKey};
pub use prefix::{CheckpointResume, PrefixCache, PrefixOptions, Reuse, ReuseSource};
