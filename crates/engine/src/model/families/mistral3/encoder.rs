//! The Pixtral tower and projector behind Mistral 3's processor, as the runtime's
//! `MediaProcessor`: soft-token counts from an image's size, the prompt expanded with each
//! image's rows, and an image's rows from the tower.

use std::path::Path;

use mlx_rs::{Array, Dtype};

use super::config::{image_settings, ImageMarkers, ImageSettings, Mistral3Args, VisionConfig};
use super::processor::{expand_prompt, preprocess_image, token_grid};
use super::vision::PixtralTower;
use crate::error::{EngineError, Result};
use crate::media::{MediaKind, RgbImage};
use crate::model::media::expanded_prompt::{ExpandedPrompt, VideoLayout};
use crate::model::media::towers::{read_checkpoint, TowerLoader};
use crate::model::MediaProcessor;
use crate::text::Tokenizer;

pub struct Mistral3Encoder {
    tower: PixtralTower,
    settings: ImageSettings,
    markers: ImageMarkers,
    image_token_id: u32,
    identity: String,
}

impl Mistral3Encoder {
    /// The tower of the Mistral 3 folder `dir`, computing in `dtype`; `None` when its
    /// config.json has no `vision_config` or its weights no Pixtral tower.
    pub fn load(dir: &Path, dtype: Dtype) -> Result<Option<Self>> {
        let mut checkpoint = read_checkpoint(dir)?;
        let path = dir.join("config.json");
        let Some(vision) = VisionConfig::from_json(&checkpoint.config, &path)? else { return Ok(None) };
        // transformers names the tower `vision_tower.*`; mlx-vlm's conversions (mlx-community)
        // `vision_tower.vision_model.*`, with a channels-last patch convolution.
        let Some(prefix) = ["vision_tower.", "vision_tower.vision_model."]
            .into_iter()
            .find(|p| checkpoint.weights.contains(&format!("{p}patch_conv.weight")))
        else {
            tracing::warn!(folder = %dir.display(), "vision_config without a Pixtral tower's tensors; loading the text model only");
            return Ok(None);
        };
        let args = Mistral3Args::from_json(&checkpoint.config, &path)?;
        let (settings, markers) = image_settings(dir, &vision, &args)?;
        let text_hidden = checkpoint
            .config
            .get("text_config")
            .and_then(|t| t.get("hidden_size"))
            .and_then(serde_json::Value::as_u64)
            .ok_or_else(|| EngineError::ModelFormat { path: path.clone(), reason: "text_config has no hidden_size".into() })?;
        let began = std::time::Instant::now();
        let tower =
            PixtralTower::load(&mut TowerLoader { weights: &mut checkpoint.weights, dtype }, prefix, &vision, &args, text_hidden as usize)?;
        checkpoint.weights.expect_all_taken("mistral3 vision tower")?;
        mlx_rs::transforms::eval(tower.arrays())?;
        tracing::info!(layers = vision.num_hidden_layers, ms = began.elapsed().as_millis() as u64, "vision tower loaded");
        // Everything that changes the tower's input or output for the same file.
        let identity = format!("{}:mistral3:{settings:?}:{:?}:{dtype:?}", checkpoint.fingerprint, args.vision_feature_layer);
        Ok(Some(Self { tower, settings, markers, image_token_id: args.image_token_id, identity }))
    }

    pub fn settings(&self) -> &ImageSettings {
        &self.settings
    }

    /// The tower's rows for a preprocessed image [3, height, width].
    pub fn encode(&self, pixels: &[f32], height: usize, width: usize) -> Result<Array> {
        self.tower.forward(&Array::from_slice(pixels, &[3, height as i32, width as i32]))
    }
}

impl MediaProcessor for Mistral3Encoder {
    fn identity(&self) -> String {
        self.identity.clone()
    }

    fn reads(&self, kind: MediaKind) -> bool {
        kind == MediaKind::Image
    }

    fn sampling_rate(&self) -> u32 {
        16_000
    }

    fn image_soft_tokens(&self, width: u32, height: u32) -> Result<usize> {
        let (rows, cols) = token_grid(height as usize, width as usize, &self.settings)?;
        Ok(rows * cols)
    }

    fn audio_soft_tokens(&self, _samples: &[f32]) -> usize {
        0
    }

    fn expand_prompt(
        &self,
        _tokenizer: &Tokenizer,
        _rendered: &str,
        _image_tokens: &[usize],
        _audio_tokens: &[usize],
        _videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt> {
        Err(EngineError::Internal("Mistral 3 lays an image out by its shape: expand_prompt_sized".into()))
    }

    fn expand_prompt_sized(
        &self,
        tokenizer: &Tokenizer,
        rendered: &str,
        image_tokens: &[usize],
        image_sizes: &[(u32, u32)],
        audio_tokens: &[usize],
        videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt> {
        if !audio_tokens.is_empty() || !videos.is_empty() {
            return Err(EngineError::invalid("input", "Mistral 3 reads images only"));
        }
        let m = &self.markers;
        if tokenizer.token_to_id(&m.image) != Some(self.image_token_id) {
            return Err(EngineError::Tokenizer(format!("the vocabulary's `{}` is not image_token_index {}", m.image, self.image_token_id)));
        }
        for marker in [&m.row_break, &m.end] {
            if tokenizer.token_to_id(marker).is_none() {
                return Err(EngineError::Tokenizer(format!("the vocabulary has no `{marker}`")));
            }
        }
        if image_sizes.len() != image_tokens.len() {
            return Err(EngineError::Internal(format!("{} image sizes for {} images", image_sizes.len(), image_tokens.len())));
        }
        let grids = image_sizes.iter().map(|&(w, h)| token_grid(h as usize, w as usize, &self.settings)).collect::<Result<Vec<_>>>()?;
        expand_prompt(tokenizer, m, self.image_token_id, rendered, &grids)
    }

    fn embed_image(&self, image: &RgbImage) -> Result<Array> {
        let pixels = preprocess_image(image, &self.settings)?;
        self.encode(&pixels.values, pixels.height, pixels.width)
    }

    fn embed_audio(&self, _samples: &[f32]) -> Result<Array> {
        Err(EngineError::invalid("input", "Mistral 3 reads no audio"))
    }
}
