//! The multimodal embedder: a tower's output → weightless RMS norm → a projection into the
//! text model's hidden size (`embed_vision`, `embed_audio`).

use mlx_rs::{fast, Array};

use crate::error::Result;
use crate::model::layers::Linear;
use crate::model::media::towers::TowerLoader;

pub struct Embedder {
    projection: Linear,
    eps: f32,
}

impl Embedder {
    /// `name` is `embed_vision` or `embed_audio`; `input` the tower's output width.
    pub fn load(l: &mut TowerLoader, name: &str, input: usize, eps: f32) -> Result<Self> {
        let projection = l.linear(&format!("{name}.embedding_projection"))?;
        if projection.in_features() != input as i32 {
            return Err(l.corrupt(format!(
                "`{name}.embedding_projection.weight` takes {} inputs where config.json implies {input}",
                projection.in_features()
            )));
        }
        Ok(Self { projection, eps })
    }

    pub fn forward(&self, x: &Array) -> Result<Array> {
        self.projection.forward(&fast::rms_norm(x, None, self.eps)?)
    }

    pub fn arrays(&self) -> Vec<&Array> {
        self.projection.arrays()
    }
}
