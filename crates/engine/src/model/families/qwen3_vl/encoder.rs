//! Qwen3-VL's vision tower behind its processor, as the runtime's `MediaProcessor`: soft-token
//! counts from an image's size or a video's headers, the prompt expanded with each image's and
//! video's placeholders and every token's multimodal RoPE position, and an item's rows (the
//! merger's, then each deepstack merger's) from the tower.

use std::path::Path;

use mlx_rs::{Array, Dtype};

use super::config::{ImageProcessorConfig, ImageSettings, VideoProcessorConfig, VideoSettings, VisionConfig};
use super::processor::{expand_prompt, grid_tokens, image_grid, preprocess_image, token_positions, VisionTokens};
use super::video::{layout, preprocess_video};
use super::vision::{VisionInput, VisionTower};
use crate::error::{EngineError, Result};
use crate::media::{MediaKind, RgbImage, Video, VideoInfo};
use crate::model::media::expanded_prompt::{ExpandedPrompt, SoftTokenSpan, TokenPositions, VideoLayout};
use crate::model::media::towers::{read_checkpoint, TowerLoader};
use crate::model::MediaProcessor;
use crate::text::Tokenizer;

pub struct Qwen3VlEncoder {
    tower: VisionTower,
    settings: ImageSettings,
    /// `None` where the video processor's config cannot be used (images still can).
    video: Option<VideoSettings>,
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
        let video = match VideoProcessorConfig::from_folder(dir).and_then(|(c, path)| c.resolve(&vision, &path)) {
            Ok(v) => Some(v),
            Err(e) => {
                tracing::warn!(folder = %dir.display(), "video processor config not usable, loading without video: {e}");
                None
            }
        };
        let began = std::time::Instant::now();
        let tower = VisionTower::load(&mut TowerLoader { weights: &mut checkpoint.weights, dtype }, &vision)?;
        checkpoint.weights.expect_all_taken("qwen3_vl vision tower")?;
        mlx_rs::transforms::eval(tower.arrays())?;
        tracing::info!(
            blocks = vision.depth,
            deepstack = vision.deepstack_visual_indexes.len(),
            ms = began.elapsed().as_millis() as u64,
            "vision tower loaded"
        );
        let id = |key: &str, default: u64| checkpoint.config.get(key).and_then(serde_json::Value::as_u64).unwrap_or(default) as u32;
        let tokens = VisionTokens {
            image: "<|image_pad|>".into(),
            image_id: id("image_token_id", 151_655),
            video: "<|video_pad|>".into(),
            video_id: id("video_token_id", 151_656),
            vision_start: "<|vision_start|>".into(),
            vision_end: "<|vision_end|>".into(),
        };
        // Everything that changes the tower's input or output for the same file.
        let identity = format!("{}:qwen3_vl:{settings:?}:{dtype:?}", checkpoint.fingerprint);
        Ok(Some(Self { tower, settings, video, tokens, identity }))
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

    pub fn video_settings(&self) -> Option<&VideoSettings> {
        self.video.as_ref()
    }

    fn video_or_refuse(&self) -> Result<&VideoSettings> {
        self.video
            .as_ref()
            .ok_or_else(|| EngineError::invalid("input", "this model's video processor config could not be read (see the log)"))
    }
}

impl MediaProcessor for Qwen3VlEncoder {
    fn identity(&self) -> String {
        self.identity.clone()
    }

    fn reads(&self, kind: MediaKind) -> bool {
        match kind {
            MediaKind::Image => true,
            MediaKind::Video => self.video.is_some(),
            MediaKind::Audio => false,
        }
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

    fn video_layout(&self, info: &VideoInfo) -> Result<VideoLayout> {
        layout(info, self.video_or_refuse()?)
    }

    fn video_sampling(&self) -> String {
        match &self.video {
            Some(v) => format!(
                "fps {:?}, frames {:?} in {}..={}, sample {}, pixels {}..={}, cap {} ({} tokens)",
                v.fps,
                v.num_frames,
                v.min_frames,
                v.max_frames,
                v.do_sample_frames,
                v.frame.min_pixels,
                v.frame.max_pixels,
                v.cap_pixels_per_frame,
                v.max_video_tokens
            ),
            None => String::new(),
        }
    }

    fn expand_prompt(
        &self,
        tokenizer: &Tokenizer,
        rendered: &str,
        image_tokens: &[usize],
        audio_tokens: &[usize],
        videos: &[VideoLayout],
    ) -> Result<ExpandedPrompt> {
        let t = &self.tokens;
        let mut checks = vec![(&t.image, t.image_id, "image_token_id")];
        if !videos.is_empty() {
            checks.push((&t.video, t.video_id, "video_token_id"));
        }
        for (token, id, key) in checks {
            if tokenizer.token_to_id(token) != Some(id) {
                return Err(EngineError::Tokenizer(format!("the vocabulary's `{token}` is not {key} {id}")));
            }
        }
        expand_prompt(tokenizer, t, rendered, image_tokens, audio_tokens, videos)
    }

    fn token_positions(
        &self,
        ids: &[u32],
        spans: &[SoftTokenSpan],
        image_sizes: &[(u32, u32)],
        videos: &[VideoLayout],
    ) -> Result<Option<TokenPositions>> {
        // One grid per span: an image's, or (1, rows, columns) for each frame group of a video.
        let mut grids = Vec::with_capacity(spans.len());
        let mut images = image_sizes.iter();
        for span in spans {
            grids.push(match span.kind {
                MediaKind::Image => {
                    let &(width, height) =
                        images.next().ok_or_else(|| EngineError::Internal("more image spans than image sizes".into()))?;
                    image_grid(height as usize, width as usize, &self.settings)?
                }
                MediaKind::Video => {
                    let layout =
                        videos.get(span.index).ok_or_else(|| EngineError::Internal(format!("no layout for video {}", span.index + 1)))?;
                    [1, layout.grid[1], layout.grid[2]]
                }
                MediaKind::Audio => return Err(EngineError::invalid("input", "Qwen3-VL reads no audio")),
            });
        }
        Ok(Some(token_positions(ids.len(), spans, &grids, self.settings.merge_size)?))
    }

    fn embed_image(&self, image: &RgbImage) -> Result<Array> {
        let patches = preprocess_image(image, &self.settings)?;
        self.encode(&patches.values, patches.grid, patches.patch_dim)
    }

    fn embed_audio(&self, _samples: &[f32]) -> Result<Array> {
        Err(EngineError::invalid("input", "Qwen3-VL reads no audio"))
    }

    fn embed_video(&self, video: &Video, layout: &VideoLayout) -> Result<Array> {
        let settings = self.video_or_refuse()?;
        if video.frames.len() != layout.frames.len() {
            return Err(EngineError::Internal(format!("{} frames decoded, {} sampled", video.frames.len(), layout.frames.len())));
        }
        let patches = preprocess_video(&video.frames, layout.grid, settings)?;
        self.encode(&patches.values, patches.grid, patches.patch_dim)
    }
}
