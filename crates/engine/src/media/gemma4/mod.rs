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

mod audio;
mod config;
mod fft;
mod image;
mod mel;
mod prompt;

pub use self::audio::{extract_features, soft_tokens as audio_soft_tokens, AudioInput};
pub use self::config::{AudioConfig, ImageConfig, ProcessorConfig, SUPPORTED_SOFT_TOKENS};
pub use self::image::{preprocess_image, soft_tokens as image_soft_tokens, target_size, ImageInput};
pub use self::prompt::{expand_prompt, ExpandedPrompt, MediaTokens, SoftTokenSpan};
