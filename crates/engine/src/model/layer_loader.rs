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
    /// 1.0 for checkpoints whose norms multiply by `1 + weight`.
    norm_offset: f32,
}

/// How an attention layer differs between architectures.
pub struct AttentionSpec<'a> {
    /// None for a layer without rotary embeddings.
    pub rope: Option<&'a RopeConfig>,
    pub scale: f32,
    pub window: Option<usize>,
}

/// Head sizes and where keys and values come from, for `attention_shaped`.
pub struct AttentionShape {
    pub head_dim: usize,
    pub kv_heads: usize,
    pub kv: KvWeights,
    /// Normalise values (RMS, no weight).
    pub v_norm: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KvWeights {
    /// k_proj and v_proj.
    Own,
    /// k_proj alone, doubling as the values (`attention_k_eq_v`).
    KeysAsValues,
    /// None: the layer attends to another layer's keys and values.
    Shared,
}

impl<'a> LayerLoader<'a> {
    pub fn new(weights: &'a mut Weights, config: &'a TextConfig, opts: &BuildOptions, norm_offset: f32) -> Self {
        Self { weights, config, dtype: opts.dtype, dequantize: opts.dequantize, norm_offset }
    }

    pub fn linear(&mut self, prefix: &str) -> Result<Linear> {
        self.weights.linear(prefix)?.into_dtype(self.dtype, self.dequantize)
    }

    /// The output head's own projection (`lm_head`), or `None` where the config ties the head
    /// to the embeddings; a tied checkpoint may still carry a copy of the head, which is
    /// dropped (the embeddings are used).
    pub fn own_lm_head(&mut self) -> Result<Option<Linear>> {
        if !self.config.tie_word_embeddings {
            return Ok(Some(self.linear("lm_head")?));
        }
        let copies: Vec<String> = self.weights.remaining().filter(|n| n.starts_with("lm_head.")).cloned().collect();
        for name in copies {
            self.weights.take_optional(&name);
        }
        Ok(None)
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
        let c = self.config;
        let shape = AttentionShape { head_dim: c.head_dim, kv_heads: c.num_kv_heads, kv: KvWeights::Own, v_norm: false };
        self.attention_shaped(prefix, spec, shape)
    }

    /// `attention` for layers whose shape differs from the config's defaults.
    pub fn attention_shaped(&mut self, prefix: &str, spec: AttentionSpec, shape: AttentionShape) -> Result<Attention> {
        let p = format!("{prefix}.self_attn");
        let c = self.config;
        let mut parts = vec![self.linear(&format!("{p}.q_proj"))?];
        if shape.kv != KvWeights::Shared {
            parts.push(self.linear(&format!("{p}.k_proj"))?);
        }
        if shape.kv == KvWeights::Own {
            parts.push(self.linear(&format!("{p}.v_proj"))?);
        }
        let own = shape.kv != KvWeights::Shared;
        let v_norm = if shape.v_norm && own {
            let ones = mlx_rs::ops::ones::<f32>(&[shape.head_dim as i32])?;
            Some(RmsNorm::new(ones, c.rms_norm_eps, 0.0, self.dtype)?)
        } else {
            None
        };
        Ok(Attention {
            qkv: FusedLinear::new(parts)?,
            o_proj: self.linear(&format!("{p}.o_proj"))?,
            q_norm: self.optional_norm(&format!("{p}.q_norm.weight"))?,
            k_norm: if own { self.optional_norm(&format!("{p}.k_norm.weight"))? } else { None },
            v_norm,
            values_from_keys: shape.kv == KvWeights::KeysAsValues,
            num_heads: c.num_heads,
            num_kv_heads: shape.kv_heads,
            head_dim: shape.head_dim,
            scale: spec.scale,
            rope: spec.rope.map(|rope| Rope::new(shape.head_dim, rope, c.rope_traditional)),
            window: spec.window,
            sinks: None,
            query_scale: c.query_position_scale,
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
