//! Mistral 3 (`mistral3`: Mistral Small 3.1 / 3.2): a Mistral text model (`text`, the Llama
//! family's decoder) with the Pixtral vision tower and Mistral 3's projector (`vision`), the
//! Pixtral processor (`processor`), the config files (`config`) and the adapter that plugs the
//! tower into the runtime (`encoder`).

pub mod config;
pub mod encoder;
pub mod processor;
pub mod text;
pub mod vision;

use std::path::Path;

use mlx_rs::Dtype;

use crate::error::Result;
use crate::model::config::ConfigDefaults;
use crate::model::family::Family;
use crate::model::MediaProcessor;

pub use encoder::Mistral3Encoder;
pub use text::{build, Mistral3Text};

pub const FAMILY: Family = Family {
    // The checkpoint's own model type: its text config says `mistral`, which the Llama family
    // reads without the tower (see `registry::architecture`).
    model_types: &["mistral3"],
    denoising: false,
    defaults: |_| ConfigDefaults::default(),
    build,
    encoder: Some(load_encoder),
};

fn load_encoder(dir: &Path, dtype: Dtype) -> Result<Option<Box<dyn MediaProcessor>>> {
    Ok(Mistral3Encoder::load(dir, dtype)?.map(|e| Box::new(e) as Box<dyn MediaProcessor>))
}
