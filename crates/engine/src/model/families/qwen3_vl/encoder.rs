//! Qwen3-VL's vision tower behind its processor, as the runtime's `MediaProcessor`: soft-token
//! counts from an image's size, the prompt expanded with each image's placeholders and every
//! token's multimodal RoPE position, and an image's rows (the merger's, then each deepstack
//! merger's) from the tower.

use std::path::Path;

use mlx_rs::{Array, Dtype};

use super::config::{ImageProcessorConfig, ImageSettings, VisionConfig};
use super::processor::{expand_prompt, grid_tokens, image_grid, preprocess_image, token_positions, VisionTokens};
use super::vision::{VisionInput, VisionTower};
use crate::error::{EngineError, Result};
use crate::media::{ExpandedPrompt, MediaKind, RgbImage, SoftTokenSpan, TokenPositions};
use crate::model::towers::{read_checkpoint, TowerLoader};
use crate::model::MediaProcessor;
use crate::text::Tokenizer;

pub struct Qwen3VlEncoder {
    tower: VisionTower,
    settings: ImageSettings,
    tokens: VisionTokens,
    identity: String,
}

impl Qwen3VlEncoder {
    /// The vision tower of the Qwen3-VL folder `dir`, computing in `dtype`; `None` when its
    /// config.json has no `vision_config` or its weights no `visual.*` tower.
    pub fn load(dir: &Path, dtype: Dtype) -> Result<Option<Self>> {
        let mut checkpoint = read_checkpoint(dir)?;
        let path = dir.join("config.json");
        let Some(vision) = VisionConfig::from_json(&checkpoint.config, &path)? else { return Ok(None) };
        // Conversions that name the tower otherwise (mlx-vlm's `vision_tower.*`, channels-last
        // convolutions) are not read yet: such a folder loads as text-only, as before.
        if !checkpoint.weights.contains("visual.patch_embed.proj.weight") {
            tracing::warn!(folder = %dir.display(), "vision_config without transformers' `visual.*` tower tensors; loading the text model only");
            return Ok(None);
        }
        let settings = ImageProcessorConfig::from_folder(dir)?.resolve(&vision, &dir.join("preprocessor_config.json"))?;
        let began = std::time::Instant::now();
        let tower = VisionTower::load(&mut TowerLoader { weights: &mut checkpoint.weights, dtype }, &vision)?;
        checkpoint.weights.expect_all_taken("qwen3_vl vision tower")?;
        mlx_rs::transforms::eval(tower.arrays())?;
        tracing::info!(blocks = vision.depth, deepstack = vision.deepstack_visual_indexes.len(), ms = began.elapsed().as_millis() as u64, "vision tower loaded");
        let image_id = checkpoint.config.get("image_token_id").and_then(serde_json::Value::as_u64).unwrap_or(151_655) as u32;
        let tokens = VisionTokens { image: "<|image_pad|>".into(), image_id };
        // Everything that changes the tower's input or output for the same file.
        let identity = format!("{}:qwen3_vl:{settings:?}:{dtype:?}", checkpoint.fingerprint);
        Ok(Some(Self { tower, settings, tokens, identity }))
    }

    /// The tower's rows for preprocessed patches.
    pub fn encode(&self, patches: &[f32], grid: [usize; 3], patch_dim: usize) -> Result<Array> {
        let rows = grid.iter().product::<usize>();
        let patches = Array::from_slice(patches, &[rows as i32, patch_dim as i32]);
        self.tower.forward(VisionInput { patches: &patches, grid })
    }

    pub fn settings(&self) -> &ImageSettings {
        &self.settings
    }
}

impl MediaProcessor for Qwen3VlEncoder {
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
        Ok(grid_tokens(image_grid(height as usize, width as usize, &self.settings)?, &self.settings))
    }

    fn audio_soft_tokens(&self, _samples: &[f32]) -> usize {
        0
    }

    fn expand_prompt(&self, tokenizer: &Tokenizer, rendered: &str, image_tokens: &[usize], audio_tokens: &[usize]) -> Result<ExpandedPrompt> {
        if tokenizer.token_to_id(&self.tokens.image) != Some(self.tokens.image_id) {
            return Err(EngineError::Tokenizer(format!("the vocabulary's `{}` is not image_token_id {}", self.tokens.image, self.tokens.image_id)));
        }
        expand_prompt(tokenizer, &self.tokens, rendered, image_tokens, audio_tokens)
    }

    fn token_positions(&self, ids: &[u32], spans: &[SoftTokenSpan], image_sizes: &[(u32, u32)]) -> Result<Option<TokenPositions>> {
        let grids = image_sizes
            .iter()
            .map(|&(width, height)| image_grid(height as usize, width as usize, &self.settings))
            .collect::<Result<Vec<_>>>()?;
        Ok(Some(token_positions(ids.len(), spans, &grids, self.settings.merge_size)?))
    }

    fn embed_image(&self, image: &RgbImage) -> Result<Array> {
        let patches = preprocess_image(image, &self.settings)?;
        self.encode(&patches.values, patches.grid, patches.patch_dim)
    }

    fn embed_audio(&self, _samples: &[f32]) -> Result<Array> {
        Err(EngineError::invalid("input", "Qwen3-VL reads no audio"))
    }
}
