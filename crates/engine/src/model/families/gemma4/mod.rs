//! Gemma 4: its config arguments (`config`), the text model (`text`), its vision and audio towers
//! (`towers`), the processor that prepares images, audio and prompts for them (`processor`), and
//! the adapter that plugs both into the runtime (`encoder`).

pub mod config;
pub mod encoder;
pub mod processor;
pub mod text;
pub mod towers;

use std::path::Path;

use mlx_rs::Dtype;

use crate::error::Result;
use crate::model::config::ConfigDefaults;
use crate::model::family::Family;
use crate::model::MediaProcessor;

pub use config::{Gemma4Args, MediaMask};
pub use encoder::{Gemma4Encoder, MediaEncoder};
pub use text::{build, build_stack, Gemma4};
pub use towers::Gemma4Towers;

pub const FAMILY: Family = Family {
    model_types: &["gemma4_text"],
    denoising: false,
    // As Gemma 3: tied embeddings, RoPE θ 10⁶, `sliding_window_pattern` in transformers 4 keys.
    defaults: |_| ConfigDefaults {
        rope_theta: 1_000_000.0,
        tie_word_embeddings: true,
        attention_bias: false,
        sliding_window_pattern: true,
    },
    build,
    encoder: Some(load_encoder),
};

fn load_encoder(dir: &Path, dtype: Dtype) -> Result<Option<Box<dyn MediaProcessor>>> {
    Ok(Gemma4Encoder::load(dir, dtype)?.map(|e| Box::new(e) as Box<dyn MediaProcessor>))
}
