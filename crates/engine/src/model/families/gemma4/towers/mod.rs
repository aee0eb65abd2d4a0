//! Gemma 4's media towers and their embedders, loaded from the same checkpoint as the text
//! model: `encode_image` and `encode_audio` turn the processor's tensors into soft tokens in
//! the text hidden size, in the order they replace the placeholder ids.

mod audio;
mod audio_attention;
pub mod config;
mod conformer;
mod embedder;
mod subsample;
mod vision;

use std::path::Path;

use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::format::Fingerprint;
use crate::model::media::towers::{read_checkpoint, TowerLoader};
use audio::AudioTower;
use config::{AudioConfig, VisionConfig};
use embedder::Embedder;
use vision::VisionTower;

pub struct Gemma4Towers {
    vision: Option<(VisionTower, Embedder)>,
    audio: Option<(AudioTower, Embedder)>,
    identity: String,
    dtype: Dtype,
}

impl Gemma4Towers {
    /// The towers of the Hugging Face folder `dir` (model_type `gemma4`), computing in `dtype`.
    /// A config without `vision_config` or `audio_config` loads without that tower, and so does
    /// a checkpoint that holds none of a tower's weights (mlx-lm's text conversions drop the
    /// towers but keep both sections); some but not all of them is an error.
    pub fn load(dir: &Path, dtype: Dtype) -> Result<Self> {
        Self::load_as(dir, dtype, "gemma4")
    }

    /// `load` for a checkpoint of `model_type` whose towers are Gemma 4's (a family built on
    /// Gemma 4 names its own).
    pub fn load_as(dir: &Path, dtype: Dtype, expected_model_type: &str) -> Result<Self> {
        let mut checkpoint = read_checkpoint(dir)?;
        let config_path = dir.join("config.json");
        let model_type = checkpoint.config.get("model_type").and_then(|v| v.as_str()).unwrap_or_default();
        if model_type != expected_model_type {
            return Err(EngineError::ModelFormat {
                path: config_path,
                reason: format!("model_type `{model_type}` has no Gemma 4 media towers"),
            });
        }
        let section = |key: &str| checkpoint.config.get(key).filter(|v| v.is_object()).cloned();
        let parse_error = |key: &str, e: serde_json::Error| EngineError::ModelFormat {
            path: dir.join("config.json"),
            reason: format!("`{key}` is malformed ({e})"),
        };
        let vision_config: Option<VisionConfig> =
            section("vision_config").map(|v| serde_json::from_value(v).map_err(|e| parse_error("vision_config", e))).transpose()?;
        let audio_config: Option<AudioConfig> =
            section("audio_config").map(|v| serde_json::from_value(v).map_err(|e| parse_error("audio_config", e))).transpose()?;
        let holds = |prefix: &str| checkpoint.weights.remaining().any(|n| n.starts_with(prefix));
        let vision_config = vision_config.filter(|_| holds("vision_tower."));
        let audio_config = audio_config.filter(|_| holds("audio_tower."));
        let mut l = TowerLoader { weights: &mut checkpoint.weights, dtype };
        let vision = match &vision_config {
            Some(c) => Some((VisionTower::load(&mut l, c)?, Embedder::load(&mut l, "embed_vision", c.hidden_size, c.rms_norm_eps)?)),
            None => None,
        };
        let audio = match &audio_config {
            Some(c) => {
                c.validate().map_err(|reason| EngineError::ModelFormat { path: config_path.clone(), reason })?;
                Some((AudioTower::load(&mut l, c)?, Embedder::load(&mut l, "embed_audio", c.output_proj_dims, c.rms_norm_eps)?))
            }
            None => None,
        };
        let towers = Self { vision, audio, identity: identity(&checkpoint.fingerprint, dir, dtype), dtype };
        mlx_rs::transforms::eval(towers.arrays())?;
        Ok(towers)
    }

    pub fn has_vision(&self) -> bool {
        self.vision.is_some()
    }

    pub fn has_audio(&self) -> bool {
        self.audio.is_some()
    }

    /// Whether the audio tower takes log-mel frames `bins` wide (the feature extractor's
    /// `feature_size`); `Err` holds the width it takes.
    pub fn check_mel_bins(&self, bins: usize) -> std::result::Result<(), usize> {
        match &self.audio {
            Some((tower, _)) if !tower.accepts_bins(bins) => Err(tower.mel_bins()),
            _ => Ok(()),
        }
    }

    /// The encoder cache's tower identity (`EncoderKey::new(identity, media hash)`): the
    /// checkpoint's fingerprint, the preprocessing parameters (processor_config.json) and the
    /// compute dtype.
    pub fn tower_identity(&self) -> &str {
        &self.identity
    }

    /// `pixel_values` [1, N, 3·p²] or [N, 3·p²] (patches as the processor flattens them, in
    /// [0, 1]) and `position_ids` [1, N, 2] or [N, 2] ((x, y) per patch, (-1, -1) for padding)
    /// → [soft tokens, text hidden] in the compute dtype.
    pub fn encode_image(&self, pixel_values: &Array, position_ids: &Array) -> Result<Array> {
        let (tower, embedder) = self.vision.as_ref().ok_or_else(|| EngineError::invalid("image", "this model has no vision tower"))?;
        let pixels = unbatch(pixel_values, 2, "pixel_values")?;
        let positions = unbatch(position_ids, 2, "image_position_ids")?;
        if positions.dim(-1) != 2 {
            return Err(EngineError::invalid("image_position_ids", format!("shape {:?}, expected [N, 2]", positions.shape())));
        }
        let flat: Vec<i32> = positions.as_dtype(Dtype::Int32)?.as_slice::<i32>().to_vec();
        let positions: Vec<[i32; 2]> = flat.chunks_exact(2).map(|p| [p[0], p[1]]).collect();
        let pooled = tower.forward(&pixels, &positions)?.as_dtype(self.dtype)?;
        embedder.forward(&pooled)
    }

    /// `features` [1, T, mel] or [T, mel] (log-mel frames) and `mask` [1, T] or [T] (bool or
    /// 0/1: true for real frames) → [soft tokens, text hidden] in the compute dtype: one per
    /// four frames, those made only of padding dropped.
    pub fn encode_audio(&self, features: &Array, mask: &Array) -> Result<Array> {
        let (tower, embedder) = self.audio.as_ref().ok_or_else(|| EngineError::invalid("audio", "this model has no audio tower"))?;
        let features = unbatch(features, 2, "input_features")?;
        let mask = unbatch(mask, 1, "input_features_mask")?;
        let mask: Vec<bool> = mask.as_dtype(Dtype::Int32)?.as_slice::<i32>().iter().map(|&m| m != 0).collect();
        let out = tower.forward(&features, &mask)?;
        embedder.forward(&out.as_dtype(tower.dtype())?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all = vec![];
        if let Some((t, e)) = &self.vision {
            all.extend(t.arrays().into_iter().chain(e.arrays()));
        }
        if let Some((t, e)) = &self.audio {
            all.extend(t.arrays().into_iter().chain(e.arrays()));
        }
        all
    }
}

/// Drops a leading batch axis of 1, so an array has `rank` dimensions.
fn unbatch(a: &Array, rank: usize, name: &'static str) -> Result<Array> {
    match a.ndim() {
        n if n == rank => Ok(a.clone()),
        n if n == rank + 1 && a.dim(0) == 1 => Ok(a.reshape(&a.shape()[1..])?),
        _ => Err(EngineError::invalid(name, format!("shape {:?}: one item at a time ({rank} dimensions, or a batch of 1)", a.shape()))),
    }
}

fn identity(fingerprint: &str, dir: &Path, dtype: Dtype) -> String {
    let mut preprocessing = Fingerprint::new();
    // The processor's own parameters (patch size, soft-token budget, mel settings, …); a folder
    // without the file is identified by the checkpoint alone.
    if let Ok(text) = std::fs::read(dir.join("processor_config.json")) {
        preprocessing.add(&text);
    }
    format!("gemma4-towers/{fingerprint}/{}/{dtype:?}", preprocessing.finish())
}
