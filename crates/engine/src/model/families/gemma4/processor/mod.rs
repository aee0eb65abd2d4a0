//! Gemma 4's preprocessing, matching transformers' `Gemma4ImageProcessorPil`,
//! `Gemma4AudioFeatureExtractor` and `Gemma4Processor`:
//!
//! - [`preprocess_image`]: an RGB image to `[max_patches, patch_size² × 3]` pixel values in
//!   [0, 1], `[max_patches, 2]` patch positions, and its soft-token count.
//! - [`extract_features`]: mono samples at 16 kHz to `[frames, 128]` log-mel features, a
//!   `[frames]` mask, and the clip's soft-token count.
//! - [`expand_prompt`]: rendered chat text with `<|image|>` / `<|audio|>` placeholders to token
//!   ids, with where each item's soft tokens are.
//!
//! Settings come from the checkpoint's processor config ([`ProcessorConfig::from_folder`]).
//! Callers decode with [`crate::media::decode_image`] and [`crate::media::decode_audio`] at
//! `config.audio.sampling_rate` first.
//!
//! Fidelity (crates/engine/tests/gemma4_preprocess.rs): pixel values are identical to the
//! Pillow processor's, log-mel features within 2e-6, prompt ids identical. transformers has a
//! second image processor, `Gemma4ImageProcessor`, used when torchvision is installed: its
//! resize (torch's antialiased bicubic in float32, rounded once at the end) differs from
//! Pillow's (rounded to 8 bits between the horizontal and vertical passes) by up to 13/255 at
//! sharp edges on the test images. We follow Pillow, which needs no torchvision and is exact.
//! Not done: `dither` (random noise; checkpoints ship 0) and video.

mod audio;
mod config;
mod fft;
mod image;
mod mel;
mod prompt;

pub use self::audio::{extract_features, soft_tokens as audio_soft_tokens, AudioInput};
pub use self::config::{AudioConfig, ImageConfig, ProcessorConfig, SUPPORTED_SOFT_TOKENS};
pub use self::image::{preprocess_image, soft_tokens as image_soft_tokens, target_size, ImageInput};
pub use self::prompt::{expand_prompt, MediaTokens};
