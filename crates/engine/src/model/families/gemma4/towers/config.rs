//! The `vision_config` and `audio_config` of a Gemma 4 config.json, with transformers' defaults.

use serde::Deserialize;

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(default)]
pub struct VisionConfig {
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub num_key_value_heads: usize,
    pub head_dim: usize,
    pub rms_norm_eps: f32,
    pub patch_size: usize,
    pub pooling_kernel_size: usize,
    pub position_embedding_size: usize,
    pub use_clipped_linears: bool,
    pub standardize: bool,
    pub hidden_activation: String,
    pub rope_parameters: Option<VisionRope>,
}

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
pub struct VisionRope {
    #[serde(default = "default_vision_theta")]
    pub rope_theta: f32,
    #[serde(default)]
    pub rope_type: Option<String>,
}

fn default_vision_theta() -> f32 {
    100.0
}

impl Default for VisionConfig {
    fn default() -> Self {
        Self {
            hidden_size: 768,
            intermediate_size: 3072,
            num_hidden_layers: 16,
            num_attention_heads: 12,
            num_key_value_heads: 12,
            head_dim: 64,
            rms_norm_eps: 1e-6,
            patch_size: 16,
            pooling_kernel_size: 3,
            position_embedding_size: 10 * 1024,
            use_clipped_linears: false,
            standardize: false,
            hidden_activation: "gelu_pytorch_tanh".into(),
            rope_parameters: None,
        }
    }
}

impl VisionConfig {
    pub fn rope_theta(&self) -> f32 {
        self.rope_parameters.as_ref().map_or(default_vision_theta(), |r| r.rope_theta)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, serde::Serialize)]
#[serde(default)]
pub struct AudioConfig {
    pub hidden_size: usize,
    pub num_hidden_layers: usize,
    pub num_attention_heads: usize,
    pub hidden_act: String,
    pub subsampling_conv_channels: Vec<usize>,
    pub conv_kernel_size: usize,
    pub residual_weight: f32,
    pub attention_chunk_size: usize,
    pub attention_context_left: usize,
    pub attention_context_right: usize,
    pub attention_logit_cap: f32,
    pub attention_invalid_logits_value: f32,
    pub use_clipped_linears: bool,
    pub rms_norm_eps: f32,
    pub gradient_clipping: f64,
    pub output_proj_dims: usize,
}

impl Default for AudioConfig {
    fn default() -> Self {
        Self {
            hidden_size: 1024,
            num_hidden_layers: 12,
            num_attention_heads: 8,
            hidden_act: "silu".into(),
            subsampling_conv_channels: vec![128, 32],
            conv_kernel_size: 5,
            residual_weight: 0.5,
            attention_chunk_size: 12,
            attention_context_left: 13,
            attention_context_right: 0,
            attention_logit_cap: 50.0,
            attention_invalid_logits_value: -1.0e9,
            use_clipped_linears: true,
            rms_norm_eps: 1e-6,
            gradient_clipping: 1e10,
            output_proj_dims: 1536,
        }
    }
}

impl AudioConfig {
    /// Refuses, naming the field, a value the audio tower cannot run as transformers runs it
    /// (the reason, for a `ModelFormat` error on config.json). Shapes the weights must have
    /// follow from these fields and are checked as the tower loads.
    pub fn validate(&self) -> std::result::Result<(), String> {
        let refuse = |field: &str, why: String| Err(format!("audio_config.{field} {why}"));
        if !matches!(self.hidden_act.as_str(), "silu" | "swish") {
            return refuse("hidden_act", format!("`{}` is not supported (the audio tower runs `silu`)", self.hidden_act));
        }
        // The relative-position table is [sin, cos] of hidden_size / 2 timescales, projected
        // from hidden_size: an odd size leaves it a column short.
        if self.hidden_size == 0 || !self.hidden_size.is_multiple_of(2) {
            return refuse("hidden_size", format!("is {}; it must be even and positive", self.hidden_size));
        }
        if self.num_attention_heads == 0 || !self.hidden_size.is_multiple_of(self.num_attention_heads) {
            return refuse(
                "num_attention_heads",
                format!("is {}; it must divide hidden_size ({})", self.num_attention_heads, self.hidden_size),
            );
        }
        // Two stride-2 convolutions; the projection after them takes (channels[0] / 4) × channels[1]
        // inputs, so channels[0] stands for the mel bins and must be a multiple of 4.
        match self.subsampling_conv_channels[..] {
            [first, second] if first > 0 && first % 4 == 0 && second > 0 => {}
            _ => {
                return refuse(
                    "subsampling_conv_channels",
                    format!("is {:?}; expected two positive sizes, the first a multiple of 4", self.subsampling_conv_channels),
                )
            }
        }
        if self.conv_kernel_size == 0 {
            return refuse("conv_kernel_size", "is 0".into());
        }
        if self.attention_chunk_size == 0 {
            return refuse("attention_chunk_size", "is 0".into());
        }
        // transformers looks back attention_context_left - 1 frames: 0 would be -1.
        if self.attention_context_left == 0 {
            return refuse("attention_context_left", "is 0; it counts the query's own frame, so at least 1".into());
        }
        if !(self.attention_logit_cap > 0.0 && self.attention_logit_cap.is_finite()) {
            return refuse("attention_logit_cap", format!("is {}; logits are divided by it", self.attention_logit_cap));
        }
        if self.attention_invalid_logits_value.is_nan() {
            return refuse("attention_invalid_logits_value", "is not a number".into());
        }
        if !self.residual_weight.is_finite() {
            return refuse("residual_weight", format!("is {}", self.residual_weight));
        }
        if !(self.rms_norm_eps >= 0.0 && self.rms_norm_eps.is_finite()) {
            return refuse("rms_norm_eps", format!("is {}; it must be finite and not negative", self.rms_norm_eps));
        }
        // Also refuses NaN.
        if self.gradient_clipping.is_nan() || self.gradient_clipping <= 0.0 {
            return refuse("gradient_clipping", format!("is {}; activations are clamped to ± it", self.gradient_clipping));
        }
        if self.output_proj_dims == 0 {
            return refuse("output_proj_dims", "is 0".into());
        }
        Ok(())
    }

    /// Mel bins the subsampling expects: its projection takes `channels[0] / 4` of them per
    /// channel after two stride-2 convolutions (⌈⌈F / 2⌉ / 2⌉ from F).
    pub fn subsampled_bins(&self) -> usize {
        self.subsampling_conv_channels.first().map_or(0, |c| c / 4)
    }

    pub fn head_dim(&self) -> usize {
        self.hidden_size / self.num_attention_heads.max(1)
    }

    /// Activations are clamped to ±this (`gradient_clipping`, at most the float32 range).
    pub fn clip(&self) -> f32 {
        self.gradient_clipping.min(f32::MAX as f64) as f32
    }

    /// Keys each query block sees: the chunk, `context_left - 1` before it, `context_right` after.
    pub fn context_size(&self) -> usize {
        self.attention_chunk_size + self.max_past() + self.attention_context_right
    }

    pub fn max_past(&self) -> usize {
        self.attention_context_left.saturating_sub(1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(edit: impl FnOnce(&mut AudioConfig)) -> String {
        let mut config = AudioConfig::default();
        edit(&mut config);
        config.validate().expect_err("refused")
    }

    #[test]
    fn transformers_defaults_are_accepted() {
        assert_eq!(AudioConfig::default().validate(), Ok(()));
        assert_eq!((AudioConfig::default().subsampled_bins(), AudioConfig::default().head_dim()), (32, 128));
    }

    #[test]
    fn values_the_tower_cannot_run_are_refused_by_name() {
        type Edit = Box<dyn FnOnce(&mut AudioConfig)>;
        let cases: Vec<(&str, Edit)> = vec![
            ("hidden_act", Box::new(|c| c.hidden_act = "gelu_pytorch_tanh".into())),
            ("hidden_size", Box::new(|c| c.hidden_size = 1023)),
            ("num_attention_heads", Box::new(|c| c.num_attention_heads = 3)),
            ("num_attention_heads", Box::new(|c| c.num_attention_heads = 0)),
            ("subsampling_conv_channels", Box::new(|c| c.subsampling_conv_channels = vec![128])),
            ("subsampling_conv_channels", Box::new(|c| c.subsampling_conv_channels = vec![130, 32])),
            ("subsampling_conv_channels", Box::new(|c| c.subsampling_conv_channels = vec![128, 0])),
            ("conv_kernel_size", Box::new(|c| c.conv_kernel_size = 0)),
            ("attention_chunk_size", Box::new(|c| c.attention_chunk_size = 0)),
            ("attention_context_left", Box::new(|c| c.attention_context_left = 0)),
            ("attention_logit_cap", Box::new(|c| c.attention_logit_cap = 0.0)),
            ("attention_invalid_logits_value", Box::new(|c| c.attention_invalid_logits_value = f32::NAN)),
            ("rms_norm_eps", Box::new(|c| c.rms_norm_eps = -1e-6)),
            ("gradient_clipping", Box::new(|c| c.gradient_clipping = 0.0)),
            ("output_proj_dims", Box::new(|c| c.output_proj_dims = 0)),
        ];
        for (field, edit) in cases {
            let reason = refusal(edit);
            assert!(reason.starts_with(&format!("audio_config.{field} ")), "{field}: {reason}");
        }
    }
}
