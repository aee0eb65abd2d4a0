//! config.json and preprocessor_config.json of a Qwen3-VL folder, as transformers 5.24 reads them:
//! the text keys under `text_config` (`qwen3_vl_text`; the shared [`TextConfig`] reads most of
//! them), the vision tower's under `vision_config` (`qwen3_vl_vision`), the special token ids at
//! the top level, and the image processor's settings (Qwen2-VL's processor).

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::media::processor::image_defaults;

/// What the text model needs beyond [`TextConfig`](crate::model::config::TextConfig): the
/// multimodal RoPE sections (`rope_parameters.mrope_section`: how many frequencies follow time,
/// height and width).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TextArgs {
    pub mrope_section: [usize; 3],
    /// The image placeholder's id (`image_token_id`), read as the pad id in every forward pass.
    pub image_token_id: u32,
}

impl TextArgs {
    /// From the whole config.json; `head_dim / 2` frequencies must be split by the sections.
    pub fn from_json(root: &Value, head_dim: usize) -> std::result::Result<Self, String> {
        let text = root.get("text_config").filter(|v| v.is_object()).unwrap_or(root);
        let rope = text.get("rope_parameters").or_else(|| text.get("rope_scaling"));
        let section: Vec<usize> = match rope.and_then(|r| r.get("mrope_section")) {
            Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("mrope_section is not a list of sizes ({e})"))?,
            None => vec![24, 20, 20],
        };
        let [t, h, w] = section[..] else {
            return Err(format!("mrope_section has {} entries; time, height and width need 3", section.len()));
        };
        if t + h + w != head_dim / 2 {
            return Err(format!("mrope_section {section:?} covers {} frequencies; head_dim {head_dim} has {}", t + h + w, head_dim / 2));
        }
        let image_token_id = root.get("image_token_id").and_then(Value::as_u64).unwrap_or(151_655) as u32;
        Ok(Self { mrope_section: [t, h, w], image_token_id })
    }
}

/// `vision_config`, with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
pub struct VisionConfig {
    #[serde(default = "defaults::depth")]
    pub depth: usize,
    #[serde(default = "defaults::hidden_size")]
    pub hidden_size: usize,
    #[serde(default = "defaults::hidden_act")]
    pub hidden_act: String,
    #[serde(default = "defaults::intermediate_size")]
    pub intermediate_size: usize,
    #[serde(default = "defaults::num_heads")]
    pub num_heads: usize,
    #[serde(default = "defaults::in_channels")]
    pub in_channels: usize,
    #[serde(default = "defaults::patch_size")]
    pub patch_size: usize,
    #[serde(default = "defaults::merge")]
    pub spatial_merge_size: usize,
    #[serde(default = "defaults::temporal")]
    pub temporal_patch_size: usize,
    #[serde(default = "defaults::out_hidden_size")]
    pub out_hidden_size: usize,
    #[serde(default = "defaults::positions")]
    pub num_position_embeddings: usize,
    /// Qwen3-VL's default is [8, 16, 24]; Qwen3.5's tower (the same one) has no deepstack.
    #[serde(default)]
    pub deepstack_visual_indexes: Vec<usize>,
    pub model_type: Option<String>,
    pub rope_parameters: Option<Value>,
}

mod defaults {
    pub fn depth() -> usize {
        27
    }
    pub fn hidden_size() -> usize {
        1152
    }
    pub fn hidden_act() -> String {
        "gelu_pytorch_tanh".into()
    }
    pub fn intermediate_size() -> usize {
        4304
    }
    pub fn num_heads() -> usize {
        16
    }
    pub fn in_channels() -> usize {
        3
    }
    pub fn patch_size() -> usize {
        16
    }
    pub fn merge() -> usize {
        2
    }
    pub fn temporal() -> usize {
        2
    }
    pub fn out_hidden_size() -> usize {
        3584
    }
    pub fn positions() -> usize {
        2304
    }
}

impl VisionConfig {
    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_heads.max(1)
    }

    /// The axial RoPE's θ (`rope_parameters.rope_theta`, 10⁴ by default).
    pub fn rope_theta(&self) -> f32 {
        self.rope_parameters.as_ref().and_then(|p| p.get("rope_theta")).and_then(Value::as_f64).unwrap_or(10_000.0) as f32
    }

    /// Side of the learned position grid (`num_position_embeddings` is its square).
    pub fn grid_side(&self) -> usize {
        (self.num_position_embeddings as f64).sqrt().round() as usize
    }

    /// The config's `vision_config`, checked; `Ok(None)` when there is none.
    pub fn from_json(root: &Value, path: &Path) -> Result<Option<Self>> {
        let Some(v) = root.get("vision_config").filter(|v| v.is_object()) else { return Ok(None) };
        let bad = |reason: String| EngineError::ModelFormat { path: path.into(), reason };
        let mut c: Self = serde_json::from_value(v.clone()).map_err(|e| bad(format!("vision_config: {e}")))?;
        let qwen3_vl =
            matches!(c.model_type.as_deref(), None | Some("qwen3_vl" | "qwen3_vl_vision" | "qwen3_vl_moe" | "qwen3_vl_moe_vision"));
        if v.get("deepstack_visual_indexes").is_none() && qwen3_vl {
            c.deepstack_visual_indexes = vec![8, 16, 24];
        }
        if c.num_heads == 0 || !c.hidden_size.is_multiple_of(c.num_heads) || !c.head_dim().is_multiple_of(4) {
            return Err(bad(format!(
                "vision_config: hidden_size {} does not split into {} heads of a multiple of 4",
                c.hidden_size, c.num_heads
            )));
        }
        if c.grid_side() * c.grid_side() != c.num_position_embeddings || c.num_position_embeddings == 0 {
            return Err(bad(format!("vision_config: num_position_embeddings {} is not a square grid", c.num_position_embeddings)));
        }
        if c.patch_size == 0 || c.spatial_merge_size == 0 || c.temporal_patch_size == 0 {
            return Err(bad("vision_config: patch, merge and temporal patch sizes must be positive".into()));
        }
        if !matches!(c.hidden_act.as_str(), "gelu_pytorch_tanh" | "gelu_tanh" | "gelu") {
            return Err(bad(format!("vision_config: activation `{}` is not supported (gelu_pytorch_tanh, gelu)", c.hidden_act)));
        }
        if let Some(&i) = c.deepstack_visual_indexes.iter().find(|&&i| i >= c.depth) {
            return Err(bad(format!("vision_config: deepstack layer {i} is past the tower's {} blocks", c.depth)));
        }
        Ok(Some(c))
    }
}

/// The image processor's settings (preprocessor_config.json, Qwen2-VL's image processor), with
/// its defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ImageProcessorConfig {
    #[serde(default = "image_defaults::yes")]
    pub do_resize: bool,
    #[serde(default = "image_defaults::yes")]
    pub do_rescale: bool,
    #[serde(default = "image_defaults::yes")]
    pub do_normalize: bool,
    #[serde(default = "image_defaults::rescale")]
    pub rescale_factor: f64,
    #[serde(default = "image_defaults::clip_mean")]
    pub image_mean: [f64; 3],
    #[serde(default = "image_defaults::clip_std")]
    pub image_std: [f64; 3],
    /// Pillow's filter number (3: bicubic).
    #[serde(default = "image_defaults::bicubic")]
    pub resample: u32,
    pub patch_size: Option<usize>,
    pub temporal_patch_size: Option<usize>,
    pub merge_size: Option<usize>,
    #[serde(default)]
    pub size: PixelBudget,
    pub min_pixels: Option<usize>,
    pub max_pixels: Option<usize>,
}

/// `size`: the pixel budget (`shortest_edge` is the minimum pixel count, `longest_edge` the maximum).
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PixelBudget {
    /// Qwen2-VL's own configs call them `min_pixels` and `max_pixels`.
    #[serde(alias = "min_pixels")]
    pub shortest_edge: Option<usize>,
    #[serde(alias = "max_pixels")]
    pub longest_edge: Option<usize>,
}

impl Default for PixelBudget {
    fn default() -> Self {
        Self { shortest_edge: Some(56 * 56), longest_edge: Some(28 * 28 * 1280) }
    }
}

/// The settings the processor works with, resolved against the vision tower's.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageSettings {
    pub do_resize: bool,
    pub do_rescale: bool,
    pub do_normalize: bool,
    pub rescale_factor: f64,
    pub image_mean: [f64; 3],
    pub image_std: [f64; 3],
    pub resample: u32,
    pub patch_size: usize,
    pub temporal_patch_size: usize,
    pub merge_size: usize,
    pub min_pixels: usize,
    pub max_pixels: usize,
}

impl ImageProcessorConfig {
    /// preprocessor_config.json in `dir` (missing: the defaults).
    pub fn from_folder(dir: &Path) -> Result<Self> {
        let path = dir.join("preprocessor_config.json");
        let text = match std::fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => "{}".into(),
            Err(e) => return Err(EngineError::io(&path, e)),
        };
        serde_json::from_str(&text)
            .map_err(|e| EngineError::ModelFormat { path, reason: format!("not a Qwen2-VL image processor config ({e})") })
    }

    /// The settings, with patch sizes the tower's where the file leaves them out.
    pub fn resolve(&self, vision: &VisionConfig, path: &Path) -> Result<ImageSettings> {
        let s = ImageSettings {
            do_resize: self.do_resize,
            do_rescale: self.do_rescale,
            do_normalize: self.do_normalize,
            rescale_factor: self.rescale_factor,
            image_mean: self.image_mean,
            image_std: self.image_std,
            resample: self.resample,
            patch_size: self.patch_size.unwrap_or(vision.patch_size),
            temporal_patch_size: self.temporal_patch_size.unwrap_or(vision.temporal_patch_size),
            merge_size: self.merge_size.unwrap_or(vision.spatial_merge_size),
            min_pixels: self.min_pixels.or(self.size.shortest_edge).unwrap_or(56 * 56),
            max_pixels: self.max_pixels.or(self.size.longest_edge).unwrap_or(28 * 28 * 1280),
        };
        let bad = |reason: String| EngineError::ModelFormat { path: path.into(), reason };
        if (s.patch_size, s.temporal_patch_size, s.merge_size) != (vision.patch_size, vision.temporal_patch_size, vision.spatial_merge_size)
        {
            return Err(bad(format!(
                "the image processor's patch {} / temporal {} / merge {} differ from the vision tower's {} / {} / {}",
                s.patch_size, s.temporal_patch_size, s.merge_size, vision.patch_size, vision.temporal_patch_size, vision.spatial_merge_size
            )));
        }
        if s.min_pixels > s.max_pixels || s.max_pixels == 0 {
            return Err(bad(format!("the pixel budget {}..{} is empty", s.min_pixels, s.max_pixels)));
        }
        if s.image_std.contains(&0.0) {
            return Err(bad("image_std has a zero".into()));
        }
        Ok(s)
    }
}

/// The video processor's settings (video_preprocessor_config.json, transformers'
/// `Qwen3VLVideoProcessor`), with that class's defaults.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct VideoProcessorConfig {
    #[serde(default = "image_defaults::yes")]
    pub do_resize: bool,
    #[serde(default = "image_defaults::yes")]
    pub do_rescale: bool,
    #[serde(default = "image_defaults::yes")]
    pub do_normalize: bool,
    #[serde(default = "image_defaults::rescale")]
    pub rescale_factor: f64,
    #[serde(default = "half")]
    pub image_mean: [f64; 3],
    #[serde(default = "half")]
    pub image_std: [f64; 3],
    #[serde(default = "image_defaults::bicubic")]
    pub resample: u32,
    pub patch_size: Option<usize>,
    pub temporal_patch_size: Option<usize>,
    pub merge_size: Option<usize>,
    #[serde(default = "video_budget")]
    pub size: PixelBudget,
    #[serde(default = "image_defaults::yes")]
    pub do_sample_frames: bool,
    /// Frames sampled per second of video; `null` samples every frame (within the bounds).
    #[serde(default = "two")]
    pub fps: Option<f64>,
    /// A fixed frame count instead of `fps`.
    #[serde(default)]
    pub num_frames: Option<usize>,
    #[serde(default = "four")]
    pub min_frames: usize,
    #[serde(default = "frames_768")]
    pub max_frames: usize,
    /// qwen-vl-utils' per-frame pixel cap; unset is off in transformers 5.24 (it warns).
    #[serde(default)]
    pub cap_pixels_per_frame: Option<bool>,
    #[serde(default = "frames_768")]
    pub max_video_tokens: usize,
}

fn half() -> [f64; 3] {
    [0.5; 3]
}
fn two() -> Option<f64> {
    Some(2.0)
}
fn four() -> usize {
    4
}
fn frames_768() -> usize {
    768
}
fn video_budget() -> PixelBudget {
    PixelBudget { shortest_edge: Some(128 * 32 * 32), longest_edge: Some(32 * 32 * 768) }
}

/// The video processor's settings, resolved against the vision tower's.
#[derive(Debug, Clone, PartialEq)]
pub struct VideoSettings {
    /// Resize, rescale and normalisation, as for images (the budget is over all sampled frames).
    pub frame: ImageSettings,
    pub do_sample_frames: bool,
    pub fps: Option<f64>,
    pub num_frames: Option<usize>,
    pub min_frames: usize,
    pub max_frames: usize,
    pub cap_pixels_per_frame: bool,
    pub max_video_tokens: usize,
}

impl VideoProcessorConfig {
    /// video_preprocessor_config.json in `dir`, else preprocessor_config.json (transformers falls back
    /// to it), else the defaults. Returns the config and the file it came from.
    pub fn from_folder(dir: &Path) -> Result<(Self, std::path::PathBuf)> {
        for name in ["video_preprocessor_config.json", "preprocessor_config.json"] {
            let path = dir.join(name);
            match std::fs::read_to_string(&path) {
                Ok(text) => {
                    let config = serde_json::from_str(&text).map_err(|e| EngineError::ModelFormat {
                        path: path.clone(),
                        reason: format!("not a Qwen3-VL video processor config ({e})"),
                    })?;
                    return Ok((config, path));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(EngineError::io(&path, e)),
            }
        }
        let path = dir.join("video_preprocessor_config.json");
        Ok((serde_json::from_str("{}").expect("every field has a default"), path))
    }

    pub fn resolve(&self, vision: &VisionConfig, path: &Path) -> Result<VideoSettings> {
        let image = ImageProcessorConfig {
            do_resize: self.do_resize,
            do_rescale: self.do_rescale,
            do_normalize: self.do_normalize,
            rescale_factor: self.rescale_factor,
            image_mean: self.image_mean,
            image_std: self.image_std,
            resample: self.resample,
            patch_size: self.patch_size,
            temporal_patch_size: self.temporal_patch_size,
            merge_size: self.merge_size,
            size: self.size.clone(),
            min_pixels: None,
            max_pixels: None,
        };
        let frame = image.resolve(vision, path)?;
        let bad = |reason: String| EngineError::ModelFormat { path: path.into(), reason };
        if frame.resample != 3 {
            return Err(bad(format!("video resampling filter {} is not supported (bicubic, 3, is)", frame.resample)));
        }
        if self.fps.is_some_and(|f| !(f > 0.0 && f.is_finite())) || self.min_frames > self.max_frames || self.max_frames == 0 {
            return Err(bad(format!("the frame sampling (fps {:?}, {}..{} frames) is empty", self.fps, self.min_frames, self.max_frames)));
        }
        if self.num_frames.is_some() && self.fps.is_some() {
            // transformers refuses the pair too.
            return Err(bad("`num_frames` and `fps` are mutually exclusive".into()));
        }
        Ok(VideoSettings {
            frame,
            do_sample_frames: self.do_sample_frames,
            fps: self.fps,
            num_frames: self.num_frames,
            min_frames: self.min_frames,
            max_frames: self.max_frames,
            cap_pixels_per_frame: self.cap_pixels_per_frame.unwrap_or(false),
            max_video_tokens: self.max_video_tokens,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn mrope_sections_must_cover_the_frequencies() {
        let root = |section: Value| json!({"text_config": {"rope_parameters": {"mrope_section": section}}, "image_token_id": 5});
        assert_eq!(TextArgs::from_json(&root(json!([6, 5, 5])), 32).unwrap(), TextArgs { mrope_section: [6, 5, 5], image_token_id: 5 });
        assert!(TextArgs::from_json(&root(json!([6, 5, 4])), 32).unwrap_err().contains("covers 15"));
        assert!(TextArgs::from_json(&root(json!([6, 10])), 32).unwrap_err().contains("3"));
        // The released default.
        assert_eq!(TextArgs::from_json(&json!({}), 128).unwrap().mrope_section, [24, 20, 20]);
    }

    #[test]
    fn vision_config_is_checked() {
        let path = Path::new("config.json");
        let ok = json!({"vision_config": {"depth": 3, "hidden_size": 32, "num_heads": 2, "num_position_embeddings": 36, "deepstack_visual_indexes": [0, 1]}});
        let c = VisionConfig::from_json(&ok, path).unwrap().unwrap();
        assert_eq!((c.head_dim(), c.grid_side(), c.rope_theta()), (16, 6, 10_000.0));
        let bad = json!({"vision_config": {"depth": 3, "hidden_size": 32, "num_heads": 2, "num_position_embeddings": 35}});
        assert!(VisionConfig::from_json(&bad, path).is_err());
        let deep = json!({"vision_config": {"depth": 2, "hidden_size": 32, "num_heads": 2, "num_position_embeddings": 36, "deepstack_visual_indexes": [2]}});
        assert!(VisionConfig::from_json(&deep, path).is_err());
        assert!(VisionConfig::from_json(&json!({}), path).unwrap().is_none());
    }
}
