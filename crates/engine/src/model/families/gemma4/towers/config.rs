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
