//! The denoising method, beside autoregressive decoding, for models with a `Denoiser` (block
//! diffusion): a row's prompt goes through the model's encoder as any prompt does; then each
//! canvas of `canvas_length` tokens starts as uniform random tokens and takes one denoising step
//! per scheduler step, until it stops:
//! - the temperature falls linearly with the steps left, `t_min + (t_max - t_min) · n / N`;
//! - tokens are sampled from the tempered logits, and the entropy-bound sampler keeps the most
//!   certain ones (lowest entropy first, while the summed entropy less the largest stays within
//!   the bound), the rest are renoised (a fresh random token);
//! - the canvas stops when its argmax has not changed for `stability_threshold` steps and the
//!   mean entropy of its tempered logits is below `confidence_threshold`, or after `max_steps`;
//! - its argmax is the canvas written: streamed token by token through the row's usual checks
//!   (end of turn, stop strings, the token limit), then read through the encoder into the state
//!   before the next canvas.
//!
//! This is transformers' `DiffusionGemmaGenerationMixin.generate` (batch of one). Its noise
//! (every random canvas, and the uniforms each sampled token is drawn with, by inverse CDF) comes
//! from a `NoiseSource`, seeded or replayed (`DenoisingNoise`), so tests replay the reference's
//! draws. A denoising row steps alone: rows are never batched.

use std::collections::VecDeque;

use mlx_rs::{ops, Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::{Denoiser, DenoisingParams};
use crate::runtime::request::DenoisingNoise;
use crate::state::SequenceState;

/// Why the plan does not batch a denoising row.
pub(super) const NOT_BATCHED: &str = "the denoising method steps each row's canvas alone: rows are not batched";
/// Why a denoising row goes without speculative decoding.
pub(super) const NO_SPECULATION: &str = "the denoising method writes whole canvases; speculative decoding proposes tokens one at a time";

/// Where a canvas loop's randomness comes from.
pub trait NoiseSource: Send {
    /// A canvas of `length` tokens drawn uniformly from `0..vocab`.
    fn canvas(&mut self, length: usize, vocab: usize) -> Result<Vec<u32>>;
    /// `length` uniforms in [0, 1), one per canvas position, to sample its token with.
    fn uniforms(&mut self, length: usize) -> Result<Vec<f64>>;
}

impl DenoisingNoise {
    pub(super) fn source(&self) -> Box<dyn NoiseSource> {
        match self {
            DenoisingNoise::Seeded(seed) => Box::new(SeededNoise::new(*seed)),
            DenoisingNoise::Replay { canvases, uniforms } => {
                Box::new(ReplayedNoise { canvases: canvases.clone().into(), uniforms: uniforms.clone().into() })
            }
        }
    }
}

/// SplitMix64: small, fast, and the same on every machine.
struct SeededNoise {
    state: u64,
}

impl SeededNoise {
    fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

impl NoiseSource for SeededNoise {
    fn canvas(&mut self, length: usize, vocab: usize) -> Result<Vec<u32>> {
        // The modulo's bias is below 2^-40 for any vocabulary.
        Ok((0..length).map(|_| (self.next() % vocab as u64) as u32).collect())
    }

    fn uniforms(&mut self, length: usize) -> Result<Vec<f64>> {
        Ok((0..length).map(|_| (self.next() >> 11) as f64 / (1u64 << 53) as f64).collect())
    }
}

/// Recorded draws, handed out in order.
struct ReplayedNoise {
    canvases: VecDeque<Vec<u32>>,
    uniforms: VecDeque<Vec<f64>>,
}

impl NoiseSource for ReplayedNoise {
    fn canvas(&mut self, length: usize, vocab: usize) -> Result<Vec<u32>> {
        let canvas = self.canvases.pop_front().ok_or_else(|| EngineError::invalid("noise", "the replayed noise has no canvas left"))?;
        if canvas.len() != length || canvas.iter().any(|&t| t as usize >= vocab) {
            return Err(EngineError::invalid(
                "noise",
                format!("a replayed canvas does not fit ({} tokens, {length} wanted)", canvas.len()),
            ));
        }
        Ok(canvas)
    }

    fn uniforms(&mut self, length: usize) -> Result<Vec<f64>> {
        let u = self.uniforms.pop_front().ok_or_else(|| EngineError::invalid("noise", "the replayed noise has no uniforms left"))?;
        if u.len() != length {
            return Err(EngineError::invalid("noise", format!("replayed uniforms for {} positions, {length} wanted", u.len())));
        }
        Ok(u)
    }
}

/// A row's canvas loop.
pub(super) struct Denoising {
    params: DenoisingParams,
    vocab: usize,
    noise: Box<dyn NoiseSource>,
    /// The canvas the next step reads.
    canvas: Vec<u32>,
    /// The previous step's tempered logits [C, vocab] (none at a canvas's first step).
    self_conditioning: Option<Array>,
    /// Steps left, counting down: the temperature's `n`.
    remaining: usize,
    /// The latest argmax canvases, at most `stability_threshold` of them.
    argmaxes: VecDeque<Vec<u32>>,
    /// Decoder passes of the canvas being denoised.
    steps: usize,
    /// Decoder passes of each finished canvas.
    pub steps_per_canvas: Vec<usize>,
    /// The canvas as the latest step left it, for a consumer watching it form: each
    /// position's accepted token, else the model's current best guess (its argmax), and
    /// whether it was accepted.
    pub shown: Vec<(u32, bool)>,
}

/// One step's reading of the tempered logits, on the host.
struct StepReading {
    entropy: Vec<f32>,
    argmax: Vec<u32>,
    sampled: Vec<u32>,
}

impl Denoising {
    pub fn new(params: DenoisingParams, vocab: usize, noise: Box<dyn NoiseSource>) -> Self {
        Self {
            params,
            vocab,
            noise,
            canvas: vec![],
            self_conditioning: None,
            remaining: 0,
            argmaxes: VecDeque::new(),
            steps: 0,
            steps_per_canvas: vec![],
            shown: vec![],
        }
    }

    /// Tokens a finished canvas feeds into the state at once.
    pub fn canvas_length(&self) -> usize {
        self.params.canvas_length
    }

    /// A fresh canvas of random tokens.
    pub fn start_canvas(&mut self) -> Result<()> {
        self.canvas = self.noise.canvas(self.params.canvas_length, self.vocab)?;
        self.self_conditioning = None;
        self.remaining = self.params.max_steps;
        self.argmaxes.clear();
        self.steps = 0;
        Ok(())
    }

    /// One denoising step against what `state` holds; the canvas written (its argmax) once it
    /// stops.
    pub fn step(&mut self, denoiser: &dyn Denoiser, state: &SequenceState) -> Result<Option<Vec<u32>>> {
        let p = &self.params;
        if self.remaining == 0 {
            return Err(EngineError::Internal("a denoising step with no canvas started".into()));
        }
        let raw = denoiser.denoise(&self.canvas, self.self_conditioning.as_ref(), state)?;
        // As transformers computes it (float32): t_min + (t_max - t_min) · (n / N).
        let fraction = self.remaining as f32 / p.max_steps as f32;
        let temperature = p.t_min + (p.t_max - p.t_min) * fraction;
        let tempered = ops::divide(&raw.as_dtype(Dtype::Float32)?, Array::from_f32(temperature))?;
        let uniforms = self.noise.uniforms(p.canvas_length)?;
        let reading = read_step(&tempered, &uniforms, self.vocab)?;

        // Entropy-bound acceptance: the lowest entropies first, while their sum less the
        // largest of them (the last, sorted ascending) stays within the bound.
        let mut order: Vec<usize> = (0..reading.entropy.len()).collect();
        order.sort_by(|&a, &b| reading.entropy[a].total_cmp(&reading.entropy[b]));
        let mut accepted = vec![false; order.len()];
        let mut cumulative = 0f32;
        for &i in &order {
            cumulative += reading.entropy[i];
            accepted[i] = cumulative - reading.entropy[i] <= p.entropy_bound;
        }
        // Renoising: the tokens not accepted are replaced by a fresh random canvas's.
        let fresh = self.noise.canvas(p.canvas_length, self.vocab)?;
        self.canvas = (0..order.len()).map(|i| if accepted[i] { reading.sampled[i] } else { fresh[i] }).collect();
        self.shown = (0..order.len()).map(|i| (if accepted[i] { reading.sampled[i] } else { reading.argmax[i] }, accepted[i])).collect();

        // Stable: the argmax canvas equals each of the last `stability_threshold` ones.
        let stable = self.argmaxes.len() == p.stability_threshold && self.argmaxes.iter().all(|a| *a == reading.argmax);
        if p.stability_threshold > 0 {
            if self.argmaxes.len() == p.stability_threshold {
                self.argmaxes.pop_front();
            }
            self.argmaxes.push_back(reading.argmax.clone());
        }
        let mean_entropy = reading.entropy.iter().map(|&e| e as f64).sum::<f64>() / reading.entropy.len() as f64;
        let confident = (mean_entropy as f32) < p.confidence_threshold;

        self.self_conditioning = Some(tempered);
        self.remaining -= 1;
        self.steps += 1;
        let finished = (stable && confident) || self.remaining == 0;
        if finished {
            self.remaining = 0;
            self.self_conditioning = None;
            self.steps_per_canvas.push(self.steps);
        }
        Ok(finished.then_some(reading.argmax))
    }

    /// Steps the canvas being denoised has taken.
    pub fn steps(&self) -> usize {
        self.steps
    }
}

/// Each position's entropy, argmax and sampled token (inverse CDF at its uniform) of tempered
/// logits [C, vocab], computed on the device; only C values of each come back.
fn read_step(tempered: &Array, uniforms: &[f64], vocab: usize) -> Result<StepReading> {
    let log_probs = ops::subtract(tempered, &tempered.logsumexp_axis(-1, true)?)?;
    let probs = ops::exp(&log_probs)?;
    let entropy = ops::negative(&ops::multiply(&probs, &log_probs)?.sum_axis(-1, None)?)?;
    let argmax = ops::indexing::argmax_axis(tempered, -1, None)?.as_dtype(Dtype::Int32)?;
    let u: Vec<f32> = uniforms.iter().map(|&u| u as f32).collect();
    let u = Array::from_slice(&u, &[u.len() as i32, 1]);
    // The first index whose cumulative probability exceeds u (the last where rounding leaves none).
    let below = ops::le(&probs.cumsum(-1, None, None)?, &u)?.as_dtype(Dtype::Int32)?.sum_axis(-1, None)?;
    let sampled = ops::minimum(&below, Array::from_int(vocab as i32 - 1))?;
    mlx_rs::transforms::eval([&entropy, &argmax, &sampled])?;
    let ids = |a: &Array| a.as_slice::<i32>().iter().map(|&t| t as u32).collect();
    Ok(StepReading { entropy: entropy.as_slice::<f32>().to_vec(), argmax: ids(&argmax), sampled: ids(&sampled) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_noise_is_the_same_every_run_and_in_range() {
        let (mut a, mut b) = (SeededNoise::new(7), SeededNoise::new(7));
        let canvas = a.canvas(64, 400).unwrap();
        assert_eq!(canvas, b.canvas(64, 400).unwrap());
        assert!(canvas.iter().all(|&t| t < 400));
        let u = a.uniforms(1000).unwrap();
        assert!(u.iter().all(|&x| (0.0..1.0).contains(&x)));
        assert_ne!(SeededNoise::new(8).canvas(64, 400).unwrap(), canvas);
    }

    #[test]
    fn replayed_noise_runs_out_with_an_error_not_a_panic() {
        let mut r = DenoisingNoise::Replay { canvases: vec![vec![1, 2]], uniforms: vec![] }.source();
        assert_eq!(r.canvas(2, 10).unwrap(), [1, 2]);
        assert!(r.canvas(2, 10).unwrap_err().to_string().contains("no canvas left"));
        assert!(r.uniforms(2).is_err());
    }

    #[test]
    fn sampling_reads_the_inverse_cdf() {
        // Probabilities 0.25 / 0.5 / 0.25 (logits as their logs).
        let logits: Vec<f32> = [0.25f32, 0.5, 0.25].iter().map(|p| p.ln()).collect();
        let rows: Vec<f32> = logits.iter().cycle().take(9).copied().collect();
        let tempered = Array::from_slice(&rows, &[3, 3]);
        let r = read_step(&tempered, &[0.1, 0.5, 0.9], 3).unwrap();
        assert_eq!(r.sampled, [0, 1, 2]);
        assert_eq!(r.argmax, [1, 1, 1]);
        let expected = -(0.25f32 * 0.25f32.ln() * 2.0 + 0.5 * 0.5f32.ln());
        assert!((r.entropy[0] - expected).abs() < 1e-5);
    }
}
