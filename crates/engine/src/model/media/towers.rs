//! Media encoders ("towers"): from a processor's tensors (image patches, log-mel frames) to
//! soft tokens in the text model's hidden size, ready to splice into `TextModel::embed`'s
//! output at the placeholder positions (`EmbeddingsInput`). A family keeps its own towers in
//! its folder; this module has what they share.
//!
//! Reading a multimodal checkpoint's tower weights (the text model's are left to
//! `format::hf`), under names without the `model.` prefix transformers 5 adds:
//! `vision_tower.…`, `audio_tower.…`, `embed_vision.…`, `embed_audio.…` (transformers 4 and
//! mlx-community already write them so), `visual.…` (the Qwen-VL families' tower) and
//! `multi_modal_projector.…` (Mistral 3's).

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::format::hf::{shard_files, validate_safetensors};
use crate::model::format::Fingerprint;
use crate::model::layers::{ClippedLinear, Linear, RmsNorm};
use crate::model::weights::Weights;

const TOWER_PREFIXES: [&str; 6] = ["vision_tower.", "audio_tower.", "embed_vision.", "embed_audio.", "visual.", "multi_modal_projector."];

/// A checkpoint's config.json, its tower tensors and the checkpoint's fingerprint (the same
/// one `model::load` reports: config plus every shard's header).
pub struct TowerCheckpoint {
    pub config: serde_json::Value,
    pub weights: Weights,
    pub fingerprint: String,
    pub dir: PathBuf,
}

pub fn read_checkpoint(dir: &Path) -> Result<TowerCheckpoint> {
    let path = dir.join("config.json");
    let text = std::fs::read_to_string(&path).map_err(|e| EngineError::io(&path, e))?;
    let config: serde_json::Value = serde_json::from_str(&text)
        .map_err(|e| EngineError::ModelFormat { path: path.clone(), reason: format!("config.json is not valid JSON ({e})") })?;
    let mut fingerprint = Fingerprint::new();
    fingerprint.add(config.to_string().as_bytes());
    let mut tensors = HashMap::new();
    for file in shard_files(dir)? {
        fingerprint.add(&validate_safetensors(&file)?);
        let loaded =
            Array::load_safetensors(&file).map_err(|e| EngineError::CorruptWeights { path: file.clone(), reason: e.to_string() })?;
        tensors.extend(loaded.into_iter().filter_map(|(name, a)| tower_name(&name).map(|n| (n, a))));
    }
    let weights = Weights::new(tensors, dir, None);
    Ok(TowerCheckpoint { config, weights, fingerprint: fingerprint.finish(), dir: dir.into() })
}

/// `model.vision_tower.x` and `vision_tower.x` → `vision_tower.x` (and `model.encoder.…`: an
/// encoder-decoder model, block diffusion's, keeps its towers in its encoder); other tensors → None.
fn tower_name(name: &str) -> Option<String> {
    let rest = name.strip_prefix("model.").unwrap_or(name);
    let rest = rest.strip_prefix("encoder.").unwrap_or(rest);
    TOWER_PREFIXES.iter().any(|p| rest.starts_with(p)).then(|| rest.to_string())
}

/// Takes tower layers out of the checkpoint in the compute dtype.
pub struct TowerLoader<'a> {
    pub weights: &'a mut Weights,
    pub dtype: Dtype,
}

impl TowerLoader<'_> {
    pub fn take(&mut self, name: &str) -> Result<Array> {
        Ok(self.weights.take(name)?.as_dtype(self.dtype)?)
    }

    /// Dense (quantized layers are dequantized: towers run once per media item).
    pub fn linear(&mut self, prefix: &str) -> Result<Linear> {
        self.weights.linear(prefix)?.into_dtype(self.dtype, true)
    }

    /// `{prefix}.linear` with `{prefix}.input_min` etc. when `clipped` (a missing bound is no bound).
    pub fn clipped(&mut self, prefix: &str, clipped: bool) -> Result<ClippedLinear> {
        let linear = self.linear(&format!("{prefix}.linear"))?;
        let mut bounds = |side: &str| -> Result<Option<(Array, Array)>> {
            if !clipped {
                return Ok(None);
            }
            let lo = self.weights.take_optional(&format!("{prefix}.{side}_min"));
            let hi = self.weights.take_optional(&format!("{prefix}.{side}_max"));
            let inf = |v: f32| Array::from_f32(v);
            let lo = lo.unwrap_or_else(|| inf(f32::NEG_INFINITY)).as_dtype(self.dtype)?;
            let hi = hi.unwrap_or_else(|| inf(f32::INFINITY)).as_dtype(self.dtype)?;
            Ok(Some((lo, hi)))
        };
        let input = bounds("input")?;
        let output = bounds("output")?;
        Ok(ClippedLinear { linear, input, output })
    }

    /// `take`, refusing a tensor whose shape is not `shape` (what the config implies).
    pub fn take_shaped(&mut self, name: &str, shape: &[i32]) -> Result<Array> {
        let a = self.take(name)?;
        self.check_shape(name, a.shape(), shape)?;
        Ok(a)
    }

    /// `linear`, refusing a weight that is not [out, in].
    pub fn linear_shaped(&mut self, prefix: &str, out: i32, input: i32) -> Result<Linear> {
        let linear = self.linear(prefix)?;
        self.check_shape(&format!("{prefix}.weight"), &[linear.out_features(), linear.in_features()], &[out, input])?;
        Ok(linear)
    }

    /// `clipped`, refusing a weight that is not [out, in].
    pub fn clipped_shaped(&mut self, prefix: &str, clipped: bool, out: i32, input: i32) -> Result<ClippedLinear> {
        let layer = self.clipped(prefix, clipped)?;
        let got = [layer.linear.out_features(), layer.linear.in_features()];
        self.check_shape(&format!("{prefix}.linear.weight"), &got, &[out, input])?;
        Ok(layer)
    }

    /// `norm`, refusing a weight that is not [dim].
    pub fn norm_shaped(&mut self, name: &str, eps: f32, dim: i32) -> Result<RmsNorm> {
        let weight = self.weights.take(name)?;
        self.check_shape(name, weight.shape(), &[dim])?;
        RmsNorm::new(weight, eps, 0.0, self.dtype)
    }

    /// `conv`, refusing a weight whose channels-last shape is not `shape`.
    pub fn conv_shaped(&mut self, name: &str, in_channels: i32, shape: &[i32]) -> Result<Array> {
        let w = self.conv(name, in_channels)?;
        self.check_shape(name, w.shape(), shape)?;
        Ok(w)
    }

    fn check_shape(&self, name: &str, got: &[i32], want: &[i32]) -> Result<()> {
        if got == want {
            return Ok(());
        }
        Err(self.corrupt(format!("`{name}` has shape {got:?} where config.json implies {want:?}")))
    }

    /// An RMS norm multiplying by its stored weight.
    pub fn norm(&mut self, name: &str, eps: f32) -> Result<RmsNorm> {
        RmsNorm::new(self.weights.take(name)?, eps, 0.0, self.dtype)
    }

    /// A convolution weight in MLX's channels-last layout [out, spatial…, in]: transformers
    /// stores [out, in, spatial…], mlx-community already channels-last. `in_channels` tells
    /// them apart.
    pub fn conv(&mut self, name: &str, in_channels: i32) -> Result<Array> {
        let w = self.take(name)?;
        let nd = w.ndim() as i32;
        if nd < 3 {
            return Err(self.corrupt(format!("`{name}` has {nd} dimensions, not a convolution's")));
        }
        if w.dim(1) == in_channels {
            let axes: Vec<i32> = std::iter::once(0).chain(2..nd).chain(std::iter::once(1)).collect();
            return Ok(w.transpose_axes(&axes)?);
        }
        if w.dim(-1) == in_channels {
            return Ok(w);
        }
        Err(self.corrupt(format!("`{name}` has shape {:?}, expected {in_channels} input channels", w.shape())))
    }

    pub fn corrupt(&self, reason: String) -> EngineError {
        EngineError::CorruptWeights { path: self.weights.source().to_path_buf(), reason }
    }
}
