//! What a denoising (block diffusion) model is to the runtime beside `TextModel`'s
//! autoregressive forward pass: `TextModel::forward` reads the prompt, and then each finished
//! canvas, into the state (the encoder's keys and values); `Denoiser::denoise` predicts a whole
//! canvas at once from its current tokens and what the state holds, leaving the state as it
//! was. The runtime's denoising method (`runtime::generate::denoise`) runs the canvas loop.

use mlx_rs::Array;

use crate::error::Result;
use crate::state::SequenceState;

/// The canvas loop's parameters, from the checkpoint (config.json's canvas length and
/// generation_config.json's denoising keys), checked when the model loads.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct DenoisingParams {
    /// Tokens written in parallel per canvas.
    pub canvas_length: usize,
    /// Denoising steps per canvas at most.
    pub max_steps: usize,
    /// The entropy-bound sampler accepts the most certain tokens while their summed entropy,
    /// less the largest, stays within this bound; the rest are renoised.
    pub entropy_bound: f32,
    /// The temperature falls linearly from `t_max` (first step) towards `t_min` (last).
    pub t_min: f32,
    pub t_max: f32,
    /// A canvas stops early once its argmax has not changed for this many steps (0: no
    /// stability asked) and the mean entropy of its tempered logits is below
    /// `confidence_threshold`.
    pub stability_threshold: usize,
    pub confidence_threshold: f32,
}

/// A model that writes canvases by denoising.
pub trait Denoiser {
    fn params(&self) -> &DenoisingParams;

    /// One denoising step's prediction: `canvas` (`canvas_length` ids) read against everything
    /// `state` holds, `self_conditioning` the previous step's tempered logits [C, vocab]
    /// (float32; `None` at a canvas's first step) → raw logits [C, vocab] (float32). The state
    /// is not changed.
    fn denoise(&self, canvas: &[u32], self_conditioning: Option<&Array>, state: &SequenceState) -> Result<Array>;
}
