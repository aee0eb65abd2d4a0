//! DiffusionGemma (block diffusion on Gemma 4's MoE text stack): its canvas parameters
//! (`config`) and its encoder and canvas decoder (`model`). The runtime's denoising method
//! writes its replies (`runtime::generate::denoise`). Images go through Gemma 4's vision tower
//! and processor (`load_encoder`), as transformers' DiffusionGemma takes them (its processor is
//! `Gemma4Processor`, and it accepts several images); it reads no audio and no video
//! (transformers' model takes neither), so those are refused as for any model without them.

pub mod config;
pub mod model;

use std::path::Path;

use mlx_rs::Dtype;

use crate::error::Result;
use crate::model::config::ConfigDefaults;
use crate::model::families::gemma4::Gemma4Encoder;
use crate::model::family::Family;
use crate::model::MediaProcessor;

pub use model::{build, DiffusionGemma};

pub const FAMILY: Family = Family {
    model_types: &["diffusion_gemma_text"],
    denoising: true,
    // Gemma 4's.
    defaults: |_| ConfigDefaults {
        rope_theta: 1_000_000.0,
        tie_word_embeddings: true,
        attention_bias: false,
        sliding_window_pattern: true,
    },
    build,
    encoder: Some(load_encoder),
};

/// The vision tower under `model.encoder.` with Gemma 4's processor settings, where config.json
/// has a `vision_config` (none: a text-only model).
fn load_encoder(dir: &Path, dtype: Dtype) -> Result<Option<Box<dyn MediaProcessor>>> {
    Ok(Gemma4Encoder::load_as(dir, dtype, "diffusion_gemma")?.map(|e| Box::new(e) as Box<dyn MediaProcessor>))
}
