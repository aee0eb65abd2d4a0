//! The multimodal embedder: a tower's output → weightless RMS norm → a projection into the
//! text model's hidden size (`embed_vision`, `embed_audio`).

use mlx_rs::{fast, Array};

use crate::error::Result;
use crate::model::layers::Linear;
use crate::model::towers::TowerLoader;

pub struct Embedder {
    projection: Linear,
    eps: f32,
}

impl Embedder {
    /// `name` is `embed_vision` or `embed_audio`.
    pub fn load(l: &mut TowerLoader, name: &str, eps: f32) -> Result<Self> {
        Ok(Self { projection: l.linear(&format!("{name}.embedding_projection"))?, eps })
    }

    pub fn forward(&self, x: &Array) -> Result<Array> {
        self.projection.forward(&fast::rms_norm(x, None, self.eps)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        self.projection.arrays()
    }
}
