//! DiffusionGemma (block diffusion on Gemma 4's MoE text stack): its canvas parameters
//! (`config`) and its encoder and canvas decoder (`model`). The runtime's denoising method
//! writes its replies (`runtime::generate::denoise`). Text only for now: images and video come
//! later.

pub mod config;
pub mod model;

use crate::model::config::ConfigDefaults;
use crate::model::family::Family;

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
    encoder: None,
};
