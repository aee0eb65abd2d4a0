//! From files on disk to a model that maps tokens to logits.

pub mod checkpoint;
pub mod config;
pub mod denoiser;
pub mod discover;
pub mod embedding;
pub mod families;
pub mod family;
pub mod format;
pub mod layer_loader;
pub mod layers;
pub mod media;
pub mod memory;
pub mod ollama;
pub mod options;
pub mod pass;
pub mod registry;
pub mod runs_here;
pub mod text_model;
pub mod weights;

pub use checkpoint::{load, load_with_progress, LoadedCheckpoint};
pub use config::TextConfig;
pub use denoiser::{Denoiser, DenoisingParams};
pub use format::Format;
pub use layers::AttentionMode;
pub use media::MediaProcessor;
pub use memory::{kv_bytes_per_token_and_layer, kv_cache_bytes, parameter_count, state_bytes, state_element_bytes};
pub use options::{BuildOptions, DtypeChoice, LoadOptions};
pub use text_model::{Accepts, Compute, EmbeddingsInput, Input, MultiTokenPredictor, Output, Positions, Rows, TextModel};
