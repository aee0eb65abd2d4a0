//! config.json and the processor files of a Mistral 3 folder, as transformers 5.25 reads them:
//! the text keys under `text_config` (`mistral`; the shared [`TextConfig`] reads them), the
//! Pixtral tower's under `vision_config` (`pixtral`), the projector's and the image token's at
//! the top level, and the image processor's settings (`PixtralImageProcessor`, in
//! preprocessor_config.json or nested in processor_config.json) with the processor's own
//! (`PixtralProcessor`: patch size and spatial merge, in processor_config.json).
//!
//! [`TextConfig`]: crate::model::config::TextConfig

use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::media::processor::image_defaults;

/// The top-level keys of a `mistral3` config.json with transformers' defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct Mistral3Args {
    /// `image_token_index` (`image_token_id` in some conversions): the `[IMG]` id.
    pub image_token_id: u32,
    pub spatial_merge_size: usize,
    /// Which of the tower's hidden states the projector reads: 0 is the input to its first
    /// layer, k the output of layer k, negative counts from the end (Python's indexing).
    pub vision_feature_layer: i64,
    pub projector_hidden_act: String,
    pub multimodal_projector_bias: bool,
    /// The projector's RMS norm takes the text model's epsilon.
    pub text_rms_norm_eps: f32,
}

impl Mistral3Args {
    pub fn from_json(root: &Value, path: &Path) -> Result<Self> {
        let bad = |reason: String| EngineError::ModelFormat { path: path.into(), reason };
        let int = |key: &str| root.get(key).and_then(Value::as_u64);
        let vision_feature_layer = match root.get("vision_feature_layer") {
            None | Some(Value::Null) => -1,
            Some(v) => v.as_i64().ok_or_else(|| {
                // transformers' projector normalises and merges one layer's features; a list
                // of layers does not fit its patch merger either.
                bad(format!("vision_feature_layer {v} is not one layer index"))
            })?,
        };
        let args = Self {
            image_token_id: int("image_token_index").or_else(|| int("image_token_id")).unwrap_or(10) as u32,
            spatial_merge_size: int("spatial_merge_size").unwrap_or(2) as usize,
            vision_feature_layer,
            projector_hidden_act: root.get("projector_hidden_act").and_then(Value::as_str).unwrap_or("gelu").to_string(),
            multimodal_projector_bias: root.get("multimodal_projector_bias").and_then(Value::as_bool).unwrap_or(false),
            text_rms_norm_eps: root.get("text_config").and_then(|t| t.get("rms_norm_eps")).and_then(Value::as_f64).unwrap_or(1e-6) as f32,
        };
        if args.spatial_merge_size == 0 {
            return Err(bad("spatial_merge_size must be positive".into()));
        }
        if !matches!(args.projector_hidden_act.as_str(), "gelu" | "silu") {
            return Err(bad(format!("projector_hidden_act `{}` is not supported (gelu, silu)", args.projector_hidden_act)));
        }
        Ok(args)
    }
}

/// `vision_config` (`PixtralVisionConfig`), with transformers' defaults.
#[derive(Debug, Clone, Deserialize)]
pub struct VisionConfig {
    #[serde(default = "defaults::hidden_size")]
    pub hidden_size: usize,
    #[serde(default = "defaults::intermediate_size")]
    pub intermediate_size: usize,
    #[serde(default = "defaults::layers")]
    pub num_hidden_layers: usize,
    #[serde(default = "defaults::heads")]
    pub num_attention_heads: usize,
    #[serde(default = "defaults::channels")]
    pub num_channels: usize,
    #[serde(default = "defaults::patch_size")]
    pub patch_size: usize,
    #[serde(default = "defaults::hidden_act")]
    pub hidden_act: String,
    pub head_dim: Option<usize>,
    pub rope_parameters: Option<Value>,
    /// transformers 4 kept θ at the top.
    pub rope_theta: Option<f64>,
}

mod defaults {
    pub fn hidden_size() -> usize {
        1024
    }
    pub fn intermediate_size() -> usize {
        4096
    }
    pub fn layers() -> usize {
        24
    }
    pub fn heads() -> usize {
        16
    }
    pub fn channels() -> usize {
        3
    }
    pub fn patch_size() -> usize {
        16
    }
    pub fn hidden_act() -> String {
        "gelu".into()
    }
}

impl VisionConfig {
    pub fn head_dim(&self) -> usize {
        self.head_dim.unwrap_or(self.hidden_size / self.num_attention_heads.max(1))
    }

    /// The axial RoPE's θ (10⁴ by default).
    pub fn rope_theta(&self) -> f32 {
        self.rope_parameters.as_ref().and_then(|p| p.get("rope_theta")).and_then(Value::as_f64).or(self.rope_theta).unwrap_or(10_000.0)
            as f32
    }

    /// The config's `vision_config`, checked; `Ok(None)` when there is none.
    pub fn from_json(root: &Value, path: &Path) -> Result<Option<Self>> {
        let Some(v) = root.get("vision_config").filter(|v| v.is_object()) else { return Ok(None) };
        let bad = |reason: String| EngineError::ModelFormat { path: path.into(), reason };
        let c: Self = serde_json::from_value(v.clone()).map_err(|e| bad(format!("vision_config: {e}")))?;
        if let Some(t) = v.get("model_type").and_then(Value::as_str).filter(|&t| t != "pixtral") {
            return Err(bad(format!("vision_config: a `{t}` tower is not Pixtral's")));
        }
        // The 2-D RoPE gives a quarter of each head's dimensions to rows, a quarter to columns.
        if c.num_attention_heads == 0 || c.head_dim() == 0 || !c.head_dim().is_multiple_of(4) {
            return Err(bad(format!("vision_config: head_dim {} is not a positive multiple of 4", c.head_dim())));
        }
        if c.head_dim() * c.num_attention_heads != c.hidden_size {
            return Err(bad(format!(
                "vision_config: {} heads of {} do not make hidden_size {}",
                c.num_attention_heads,
                c.head_dim(),
                c.hidden_size
            )));
        }
        if c.patch_size == 0 || c.num_channels != 3 {
            return Err(bad(format!("vision_config: patch_size {} over {} channels (RGB needs 3)", c.patch_size, c.num_channels)));
        }
        if let Some(t) = c.rope_parameters.as_ref().and_then(|p| p.get("rope_type")).and_then(Value::as_str).filter(|&t| t != "axial") {
            return Err(bad(format!("vision_config: rope_type `{t}`; Pixtral's tower takes axial RoPE only")));
        }
        if !matches!(c.hidden_act.as_str(), "gelu" | "silu") {
            return Err(bad(format!("vision_config: activation `{}` is not supported (gelu, silu)", c.hidden_act)));
        }
        Ok(Some(c))
    }
}

/// `PixtralImageProcessor`'s settings, with that class's defaults.
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
    #[serde(default)]
    pub size: SizeLimit,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SizeLimit {
    pub longest_edge: Option<usize>,
    pub height: Option<usize>,
    pub width: Option<usize>,
}

impl Default for SizeLimit {
    fn default() -> Self {
        Self { longest_edge: Some(1024), height: None, width: None }
    }
}

/// What the processor works with.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageSettings {
    pub do_resize: bool,
    pub do_rescale: bool,
    pub do_normalize: bool,
    pub rescale_factor: f64,
    pub image_mean: [f64; 3],
    pub image_std: [f64; 3],
    pub resample: u32,
    /// The largest (height, width) an image keeps: both `longest_edge`, or `height` × `width`.
    pub max_size: (usize, usize),
    /// The tower's patch side.
    pub patch_size: usize,
    /// Patches per side of one merged token.
    pub merge_size: usize,
}

impl ImageSettings {
    /// Pixels per side of one soft token: images are sized to whole multiples of it.
    pub fn unit(&self) -> usize {
        self.patch_size * self.merge_size
    }
}

/// The marker strings the processor writes (`PixtralProcessor`'s `image_token`,
/// `image_break_token`, `image_end_token`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImageMarkers {
    pub image: String,
    pub row_break: String,
    pub end: String,
}

/// The image processor's and the processor's settings in `dir`, checked against the tower's
/// patch size and the model's spatial merge.
pub fn image_settings(dir: &Path, vision: &VisionConfig, args: &Mistral3Args) -> Result<(ImageSettings, ImageMarkers)> {
    let read = |name: &str| -> Result<Option<(Value, std::path::PathBuf)>> {
        let path = dir.join(name);
        match std::fs::read_to_string(&path) {
            Ok(text) => {
                let v = serde_json::from_str(&text)
                    .map_err(|e| EngineError::ModelFormat { path: path.clone(), reason: format!("not valid JSON ({e})") })?;
                Ok(Some((v, path)))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(EngineError::io(&path, e)),
        }
    };
    let processor = read("processor_config.json")?;
    // transformers 5 nests the image processor in processor_config.json; released folders
    // have it in preprocessor_config.json.
    let (image, image_path) = match (read("preprocessor_config.json")?, &processor) {
        (Some(found), _) => found,
        (None, Some((p, path))) if p.get("image_processor").is_some() => (p["image_processor"].clone(), path.clone()),
        _ => (Value::Object(Default::default()), dir.join("preprocessor_config.json")),
    };
    let bad = |path: &Path, reason: String| EngineError::ModelFormat { path: path.into(), reason };
    let c: ImageProcessorConfig =
        serde_json::from_value(image).map_err(|e| bad(&image_path, format!("not a Pixtral image processor config ({e})")))?;
    let max_size = match (c.size.longest_edge, c.size.height, c.size.width) {
        (Some(edge), _, _) => (edge, edge),
        (None, Some(h), Some(w)) => (h, w),
        _ => return Err(bad(&image_path, "size must have `longest_edge`, or `height` and `width`".into())),
    };
    if max_size.0 == 0 || max_size.1 == 0 {
        return Err(bad(&image_path, format!("size {max_size:?} leaves no pixels")));
    }
    if c.image_std.contains(&0.0) {
        return Err(bad(&image_path, "image_std has a zero".into()));
    }
    // The processor sizes images to its patch × merge, which must be the tower's.
    if let Some((p, path)) = &processor {
        let key = |k: &str| p.get(k).and_then(Value::as_u64).map(|v| v as usize);
        let patch = key("patch_size").unwrap_or(vision.patch_size);
        let merge = key("spatial_merge_size").unwrap_or(args.spatial_merge_size);
        if (patch, merge) != (vision.patch_size, args.spatial_merge_size) {
            return Err(bad(
                path,
                format!(
                    "the processor's patch {patch} / merge {merge} differ from the model's {} / {}",
                    vision.patch_size, args.spatial_merge_size
                ),
            ));
        }
    }
    let marker =
        |key: &str, default: &str| processor.as_ref().and_then(|(p, _)| p.get(key)).and_then(Value::as_str).unwrap_or(default).to_string();
    let markers = ImageMarkers {
        image: marker("image_token", "[IMG]"),
        row_break: marker("image_break_token", "[IMG_BREAK]"),
        end: marker("image_end_token", "[IMG_END]"),
    };
    let settings = ImageSettings {
        do_resize: c.do_resize,
        do_rescale: c.do_rescale,
        do_normalize: c.do_normalize,
        rescale_factor: c.rescale_factor,
        image_mean: c.image_mean,
        image_std: c.image_std,
        resample: c.resample,
        max_size,
        patch_size: vision.patch_size,
        merge_size: args.spatial_merge_size,
    };
    Ok((settings, markers))
}
