//! The Gemma 4 processor's settings, read from a checkpoint's `processor_config.json` (the
//! `image_processor` and `feature_extractor` objects inside it) or, for older layouts, a flat
//! `preprocessor_config.json`. Every field defaults to the Hugging Face class default, so a
//! config that omits a field behaves as transformers would.

use std::path::Path;

use serde::Deserialize;

use crate::error::{EngineError, Result};
use crate::media::pil_resize::PilFilter;

/// `max_soft_tokens` values the Gemma 4 image processor accepts.
pub const SUPPORTED_SOFT_TOKENS: [usize; 5] = [70, 140, 280, 560, 1120];

/// `Gemma4ImageProcessor` / `Gemma4ImageProcessorPil`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct ImageConfig {
    pub patch_size: usize,
    pub max_soft_tokens: usize,
    pub pooling_kernel_size: usize,
    pub do_resize: bool,
    /// A `PIL.Image.Resampling` number; 3 is bicubic.
    pub resample: u32,
    pub do_rescale: bool,
    pub rescale_factor: f64,
    pub do_normalize: bool,
    #[serde(deserialize_with = "per_channel")]
    pub image_mean: [f64; 3],
    #[serde(deserialize_with = "per_channel")]
    pub image_std: [f64; 3],
}

impl Default for ImageConfig {
    fn default() -> Self {
        Self {
            patch_size: 16,
            max_soft_tokens: 280,
            pooling_kernel_size: 3,
            do_resize: true,
            resample: 3,
            do_rescale: true,
            rescale_factor: 1.0 / 255.0,
            do_normalize: false,
            image_mean: [0.0; 3],
            image_std: [1.0; 3],
        }
    }
}

impl ImageConfig {
    /// Patches before padding can be at most this many: `max_soft_tokens × pooling²`.
    pub fn max_patches(&self) -> usize {
        self.max_soft_tokens * self.pooling_kernel_size * self.pooling_kernel_size
    }

    /// Values in one patch: `patch_size² × 3`.
    pub fn patch_dim(&self) -> usize {
        self.patch_size * self.patch_size * 3
    }

    pub(crate) fn filter(&self) -> Result<PilFilter> {
        PilFilter::from_pil(self.resample)
            .ok_or_else(|| EngineError::invalid("resample", format!("resampling filter {} is not supported", self.resample)))
    }

    pub fn validate(&self) -> Result<()> {
        if !SUPPORTED_SOFT_TOKENS.contains(&self.max_soft_tokens) {
            return Err(EngineError::invalid(
                "max_soft_tokens",
                format!("{} is not one of {SUPPORTED_SOFT_TOKENS:?}", self.max_soft_tokens),
            ));
        }
        if self.patch_size == 0 || self.pooling_kernel_size == 0 {
            return Err(EngineError::invalid("patch_size", "patch and pooling sizes must be positive"));
        }
        if self.image_std.contains(&0.0) {
            return Err(EngineError::invalid("image_std", "a standard deviation of 0"));
        }
        self.filter().map(|_| ())
    }
}

/// `Gemma4AudioFeatureExtractor`. The frame and hop lengths come from the millisecond fields,
/// as the class computes them; `frame_length`, `hop_length` and `fft_length` in a saved config
/// are derived values that transformers ignores on loading, and so do we.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct AudioConfig {
    pub feature_size: usize,
    pub sampling_rate: u32,
    pub padding_value: f32,
    pub frame_length_ms: f64,
    pub hop_length_ms: f64,
    pub min_frequency: f64,
    pub max_frequency: f64,
    pub preemphasis: f64,
    pub preemphasis_htk_flavor: bool,
    pub fft_overdrive: bool,
    /// Random noise added to the waveform. Confab does not add it (it would make features
    /// differ run to run); checkpoints ship 0.
    pub dither: f64,
    pub input_scale_factor: f64,
    pub mel_floor: f64,
    pub per_bin_mean: Option<Vec<f64>>,
    pub per_bin_stddev: Option<Vec<f64>>,
}

impl Default for AudioConfig {
    fn default() -> Self {
        Self {
            feature_size: 128,
            sampling_rate: 16_000,
            padding_value: 0.0,
            frame_length_ms: 20.0,
            hop_length_ms: 10.0,
            min_frequency: 0.0,
            max_frequency: 8000.0,
            preemphasis: 0.0,
            preemphasis_htk_flavor: true,
            fft_overdrive: false,
            dither: 0.0,
            input_scale_factor: 1.0,
            mel_floor: 1e-3,
            per_bin_mean: None,
            per_bin_stddev: None,
        }
    }
}

/// What the feature extractor's `__call__` does by default: clips are cut at 30 s (at 16 kHz)
/// and padded with zeros to a multiple of 128 samples.
pub const MAX_SAMPLES: usize = 480_000;
pub const PAD_TO_MULTIPLE_OF: usize = 128;

impl AudioConfig {
    /// Samples per analysis frame: `round(rate × frame_length_ms / 1000)`.
    pub fn frame_length(&self) -> usize {
        (self.sampling_rate as f64 * self.frame_length_ms / 1000.0).round_ties_even() as usize
    }

    pub fn hop_length(&self) -> usize {
        (self.sampling_rate as f64 * self.hop_length_ms / 1000.0).round_ties_even() as usize
    }

    /// The next power of two from the frame length (doubled with `fft_overdrive`).
    pub fn fft_length(&self) -> usize {
        let n = self.frame_length().max(1).next_power_of_two();
        if self.fft_overdrive {
            n * 2
        } else {
            n
        }
    }

    pub fn validate(&self) -> Result<()> {
        if self.frame_length() < 2 || self.hop_length() == 0 || self.feature_size == 0 {
            return Err(EngineError::invalid("frame_length_ms", "frame, hop and feature sizes must be positive"));
        }
        for (name, values) in [("per_bin_mean", &self.per_bin_mean), ("per_bin_stddev", &self.per_bin_stddev)] {
            if values.as_ref().is_some_and(|v| v.len() != self.feature_size) {
                return Err(EngineError::invalid("per_bin_mean", format!("{name} needs {} values", self.feature_size)));
            }
        }
        Ok(())
    }
}

/// `Gemma4Processor`: both halves and the processor's own numbers.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default)]
pub struct ProcessorConfig {
    #[serde(alias = "image_processor")]
    pub image: ImageConfig,
    #[serde(alias = "feature_extractor")]
    pub audio: AudioConfig,
    /// Soft tokens per image in the processor's fixed-size mode (the image processor's own
    /// count, from the image size, is what prompts use).
    pub image_seq_length: usize,
    /// The most soft tokens one clip may have.
    pub audio_seq_length: usize,
    pub audio_ms_per_token: usize,
}

impl Default for ProcessorConfig {
    fn default() -> Self {
        Self {
            image: ImageConfig::default(),
            audio: AudioConfig::default(),
            image_seq_length: 280,
            audio_seq_length: 750,
            audio_ms_per_token: 40,
        }
    }
}

impl ProcessorConfig {
    /// Reads a model folder: `processor_config.json` if there is one, else a flat
    /// `preprocessor_config.json`, else the defaults.
    pub fn from_folder(dir: &Path) -> Result<Self> {
        let nested = dir.join("processor_config.json");
        let flat = dir.join("preprocessor_config.json");
        let config = if nested.is_file() {
            Self::from_json(&nested, &read(&nested)?)?
        } else if flat.is_file() {
            let text = read(&flat)?;
            let parse = |e: serde_json::Error| bad_json(&flat, e);
            Self {
                image: serde_json::from_str(&text).map_err(parse)?,
                audio: serde_json::from_str(&text).map_err(parse)?,
                ..Self::default()
            }
        } else {
            Self::default()
        };
        config.image.validate()?;
        config.audio.validate()?;
        Ok(config)
    }

    /// Parses `processor_config.json` text; `path` names it in errors.
    pub fn from_json(path: &Path, text: &str) -> Result<Self> {
        let config: Self = serde_json::from_str(text).map_err(|e| bad_json(path, e))?;
        config.image.validate()?;
        config.audio.validate()?;
        Ok(config)
    }
}

fn read(path: &Path) -> Result<String> {
    std::fs::read_to_string(path).map_err(|e| EngineError::io(path, e))
}

fn bad_json(path: &Path, error: serde_json::Error) -> EngineError {
    EngineError::ModelFormat { path: path.into(), reason: format!("the processor config is not valid ({error})") }
}

/// `image_mean` / `image_std` are written as one number or one per channel.
fn per_channel<'de, D: serde::Deserializer<'de>>(deserializer: D) -> std::result::Result<[f64; 3], D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrThree {
        One(f64),
        Three([f64; 3]),
    }
    Ok(match OneOrThree::deserialize(deserializer)? {
        OneOrThree::One(v) => [v; 3],
        OneOrThree::Three(v) => v,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn saved_processor_config_is_read() {
        let text = r#"{"audio_ms_per_token": 40, "audio_seq_length": 750,
            "feature_extractor": {"feature_size": 128, "frame_length": 320, "hop_length": 160,
                "fft_length": 512, "mel_floor": 0.001, "per_bin_mean": null, "sampling_rate": 16000},
            "image_processor": {"image_mean": [0.0, 0.0, 0.0], "image_std": 1.0, "max_soft_tokens": 560,
                "patch_size": 16, "pooling_kernel_size": 3, "resample": 3, "rescale_factor": 0.00392156862745098},
            "image_seq_length": 280, "processor_class": "Gemma4Processor", "video_processor": null}"#;
        let config = ProcessorConfig::from_json(Path::new("processor_config.json"), text).unwrap();
        assert_eq!(config.image.max_soft_tokens, 560);
        assert_eq!(config.image.image_std, [1.0; 3]);
        assert_eq!(config.image.max_patches(), 5040);
        assert_eq!((config.audio.frame_length(), config.audio.hop_length(), config.audio.fft_length()), (320, 160, 512));
    }

    #[test]
    fn unsupported_soft_token_budget_is_an_error() {
        let text = r#"{"image_processor": {"max_soft_tokens": 100}}"#;
        assert!(ProcessorConfig::from_json(Path::new("p.json"), text).is_err());
    }
}
