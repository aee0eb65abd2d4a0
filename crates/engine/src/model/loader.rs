//! Taking a model's layers out of its checkpoint in the compute dtype: the one place that
//! knows the usual names (`self_attn.q_proj`, `mlp.gate_proj`, …) and how to configure the
//! shared layers from them, so architectures only say what differs.

use mlx_rs::Dtype;

use crate::error::Result;
use crate::model::config::{RopeConfig, TextConfig};
use crate::model::layers::{Attention, FusedLinear, Linear, Mlp, RmsNorm, Rope};
use crate::model::weights::Weights;
use crate::model::BuildOptions;

pub struct LayerLoader<'a> {
    pub weights: &'a mut Weights,
    pub config: &'a TextConfig,
    pub dtype: Dtype,
    dequantize: bool,
    /// 1.0 for Gemma, whose norms multiply by `1 + weight`.
    norm_offset: f32,
}

/// How an attention layer differs between architectures.
pub struct AttentionSpec<'a> {
    pub rope: &'a RopeConfig,
    pub scale: f32,
    pub window: Option<usize>,
}

impl<'a> LayerLoader<'a> {
    pub fn new(weights: &'a mut Weights, config: &'a TextConfig, opts: &BuildOptions, norm_offset: f32) -> Self {
        Self { weights, config, dtype: opts.dtype, dequantize: opts.dequantize, norm_offset }
    }

    pub fn linear(&mut self, prefix: &str) -> Result<Linear> {
        self.weights.linear(prefix)?.into_dtype(self.dtype, self.dequantize)
    }

    pub fn norm(&mut self, name: &str) -> Result<RmsNorm> {
        RmsNorm::new(self.weights.take(name)?, self.config.rms_norm_eps, self.norm_offset, self.dtype)
    }

    pub fn optional_norm(&mut self, name: &str) -> Result<Option<RmsNorm>> {
        let Some(weight) = self.weights.take_optional(name) else { return Ok(None) };
        Ok(Some(RmsNorm::new(weight, self.config.rms_norm_eps, self.norm_offset, self.dtype)?))
    }

    /// `{prefix}.self_attn`: q/k/v/o projections (fused q/k/v), q/k norms when present.
    pub fn attention(&mut self, prefix: &str, spec: AttentionSpec) -> Result<Attention> {
        let p = format!("{prefix}.self_attn");
        let c = self.config;
        Ok(Attention {
            qkv: FusedLinear::new(vec![
                self.linear(&format!("{p}.q_proj"))?,
                self.linear(&format!("{p}.k_proj"))?,
                self.linear(&format!("{p}.v_proj"))?,
            ])?,
            o_proj: self.linear(&format!("{p}.o_proj"))?,
            q_norm: self.optional_norm(&format!("{p}.q_norm.weight"))?,
            k_norm: self.optional_norm(&format!("{p}.k_norm.weight"))?,
            num_heads: c.num_heads,
            num_kv_heads: c.num_kv_heads,
            head_dim: c.head_dim,
            scale: spec.scale,
            rope: Rope::new(c.head_dim, spec.rope, c.rope_traditional),
            window: spec.window,
        })
    }

    /// `{prefix}.mlp`: gate/up (fused) and down projections.
    pub fn mlp(&mut self, prefix: &str) -> Result<Mlp> {
        let p = format!("{prefix}.mlp");
        Ok(Mlp {
            gate_up: FusedLinear::new(vec![self.linear(&format!("{p}.gate_proj"))?, self.linear(&format!("{p}.up_proj"))?])?,
            down: self.linear(&format!("{p}.down_proj"))?,
            activation: self.config.activation,
        })
    }
}
