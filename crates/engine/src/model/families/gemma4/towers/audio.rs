//! Gemma 4's audio tower (USM-style conformer): log-mel frames → 4× subsampling convolutions
//! → conformer blocks with chunked local attention → an output projection. Frames the mask
//! marks as padding are zeroed before each convolution, never attended to, and the soft
//! tokens they end in are dropped.

use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::families::gemma4::towers::audio_attention::relative_positions;
use crate::model::families::gemma4::towers::config::AudioConfig;
use crate::model::families::gemma4::towers::conformer::ConformerLayer;
use crate::model::families::gemma4::towers::subsample::Subsample;
use crate::model::layers::Linear;
use crate::model::media::towers::TowerLoader;

pub struct AudioTower {
    subsample: Subsample,
    /// Sinusoidal relative-position table shared by every layer.
    positions: Array,
    layers: Vec<ConformerLayer>,
    output_proj: Linear,
    /// The mel bins the config stands for (`subsampling_conv_channels[0]`)…
    mel_bins: i32,
    /// …and those left after the two stride-2 convolutions, which the projection is sized for:
    /// any input width that leaves as many runs as transformers runs it.
    subsampled_bins: i32,
}

impl AudioTower {
    pub fn load(l: &mut TowerLoader, c: &AudioConfig) -> Result<Self> {
        // `c` has passed `AudioConfig::validate`; the weights' shapes are checked against it here.
        let layers =
            (0..c.num_hidden_layers).map(|i| ConformerLayer::load(l, &format!("audio_tower.layers.{i}"), c)).collect::<Result<Vec<_>>>()?;
        Ok(Self {
            subsample: Subsample::load(l, c)?,
            positions: relative_positions(c).as_dtype(l.dtype)?,
            layers,
            output_proj: l.linear_shaped("audio_tower.output_proj", c.output_proj_dims as i32, c.hidden_size as i32)?,
            mel_bins: c.subsampling_conv_channels[0] as i32,
            subsampled_bins: c.subsampled_bins() as i32,
        })
    }

    /// features [T, mel] and the frame mask (true = real) → [real soft tokens, output dims].
    pub fn forward(&self, features: &Array, mask: &[bool]) -> Result<Array> {
        let t = features.dim(0);
        if features.ndim() != 2 || subsampled(features.dim(1)) != self.subsampled_bins || t as usize != mask.len() {
            return Err(EngineError::invalid(
                "input_features",
                format!("shape {:?} with a {}-frame mask, expected [frames, {}]", features.shape(), mask.len(), self.mel_bins),
            ));
        }
        if t < 4 {
            return Err(EngineError::invalid("input_features", format!("{t} frames is too short (at least 4)")));
        }
        let dtype = self.positions.dtype();
        let (mut h, mask) = self.subsample.forward(&features.as_dtype(dtype)?.expand_dims(0)?, mask)?;
        if let Some(first) = self.layers.first() {
            let allowed = first.attention().allowed(&mask);
            for layer in &self.layers {
                h = layer.forward(&h, &self.positions, &allowed)?;
            }
        }
        let h = self.output_proj.forward(&h)?;
        let keep: Vec<i32> = (0..mask.len() as i32).filter(|&i| mask[i as usize]).collect();
        let n = h.dim(1);
        Ok(h.reshape(&[n, -1])?.take_axis(Array::from_slice(&keep, &[keep.len() as i32]), 0)?)
    }

    /// Whether log-mel frames `bins` wide fit the subsampling (as `channels[0]` bins do).
    pub fn accepts_bins(&self, bins: usize) -> bool {
        subsampled(bins as i32) == self.subsampled_bins
    }

    /// The mel bins the config stands for, `subsampling_conv_channels[0]`.
    pub fn mel_bins(&self) -> usize {
        self.mel_bins as usize
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.subsample.arrays();
        all.push(&self.positions);
        all.extend(self.layers.iter().flat_map(ConformerLayer::arrays));
        all.extend(self.output_proj.arrays());
        all
    }

    pub fn dtype(&self) -> Dtype {
        self.positions.dtype()
    }
}

/// Bins left by two stride-2, padding-1, 3-wide convolutions.
pub fn subsampled(bins: i32) -> i32 {
    ((bins + 1) / 2 + 1) / 2
}
