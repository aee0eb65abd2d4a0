//! Shared blocks, configured per architecture rather than copied into each.

pub mod attention;
pub mod embedding;
pub mod linear;
pub mod mlp;
pub mod moe;
pub mod norm;
pub mod rope;

pub use attention::{Attention, KvSource};
pub use embedding::Embedding;
pub use linear::{FusedLinear, Linear};
pub use mlp::Mlp;
pub use moe::Experts;
pub use norm::RmsNorm;
pub use rope::Rope;
