//! Qwen3-VL (`qwen3_vl`, and `qwen3_vl_moe` with routed experts): Qwen 3's text model with multimodal RoPE and deepstack
//! (`text`), its vision tower (`vision`), the image processor and prompt expansion
//! (`processor`), the video processor (`video`: sampled frames filling the temporal patches,
//! through the same tower), the config files (`config`) and the adapter that plugs the tower
//! into the runtime (`encoder`).

pub mod config;
pub mod encoder;
pub mod processor;
pub mod text;
pub mod video;
pub mod vision;

use std::path::Path;

use mlx_rs::Dtype;

use crate::error::Result;
use crate::model::config::ConfigDefaults;
use crate::model::family::Family;
use crate::model::MediaProcessor;

pub use encoder::Qwen3VlEncoder;
pub use text::{build, Qwen3VlText};

pub const FAMILY: Family = Family {
    // The text config's model type (a Qwen3-VL folder's top-level one is `qwen3_vl`).
    model_types: &["qwen3_vl_text", "qwen3_vl_moe_text"],
    denoising: false,
    defaults: |_| ConfigDefaults { rope_theta: 5_000_000.0, ..ConfigDefaults::default() },
    build,
    encoder: Some(load_encoder),
};

fn load_encoder(dir: &Path, dtype: Dtype) -> Result<Option<Box<dyn MediaProcessor>>> {
    Ok(Qwen3VlEncoder::load(dir, dtype)?.map(|e| Box::new(e) as Box<dyn MediaProcessor>))
}
