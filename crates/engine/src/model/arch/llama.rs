//! The Llama family: Llama 2/3.x, SmolLM2, Mistral-style dense models, Qwen 2 and Qwen 3.
//!
//! They share one block (pre-norm attention, pre-norm gated MLP); Qwen 2's q/k/v biases and
//! Qwen 3's per-head q/k norms are read from the weights when present.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{Array, Dtype};

use crate::cache::KvCache;
use crate::error::Result;
use crate::model::config::TextConfig;
use crate::model::layers::{Attention, Embedding, FusedLinear, Linear, Mlp, RmsNorm, Rope};
use crate::model::weights::Weights;
use crate::model::{BuildOptions, TextModel};

struct Block {
    input_norm: RmsNorm,
    attention: Attention,
    post_attention_norm: RmsNorm,
    mlp: Mlp,
}

pub struct Llama {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    norm: RmsNorm,
    /// None when the output head is tied to the embeddings.
    lm_head: Option<Linear>,
}

pub fn build(config: &TextConfig, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let (dtype, deq) = (opts.dtype, opts.dequantize);
    let eps = config.rms_norm_eps;
    let linear = |w: &mut Weights, name: String| w.linear(&name)?.into_dtype(dtype, deq);
    let norm = |w: &mut Weights, name: String| RmsNorm::new(w.take(&name)?, eps, 0.0, dtype);
    let optional_norm = |w: &mut Weights, name: String| {
        w.take_optional(&name).map(|weight| RmsNorm::new(weight, eps, 0.0, dtype)).transpose()
    };

    let mut blocks = Vec::with_capacity(config.num_layers);
    for i in 0..config.num_layers {
        let p = format!("model.layers.{i}");
        let attention = Attention {
            qkv: FusedLinear::new(vec![
                linear(w, format!("{p}.self_attn.q_proj"))?,
                linear(w, format!("{p}.self_attn.k_proj"))?,
                linear(w, format!("{p}.self_attn.v_proj"))?,
            ])?,
            o_proj: linear(w, format!("{p}.self_attn.o_proj"))?,
            q_norm: optional_norm(w, format!("{p}.self_attn.q_norm.weight"))?,
            k_norm: optional_norm(w, format!("{p}.self_attn.k_norm.weight"))?,
            num_heads: config.num_heads,
            num_kv_heads: config.num_kv_heads,
            head_dim: config.head_dim,
            scale: (config.head_dim as f32).powf(-0.5),
            rope: Rope::new(config.head_dim, &config.rope, config.rope_traditional),
            window: None,
        };
        blocks.push(Block {
            input_norm: norm(w, format!("{p}.input_layernorm.weight"))?,
            attention,
            post_attention_norm: norm(w, format!("{p}.post_attention_layernorm.weight"))?,
            mlp: Mlp {
                gate_up: FusedLinear::new(vec![linear(w, format!("{p}.mlp.gate_proj"))?, linear(w, format!("{p}.mlp.up_proj"))?])?,
                down: linear(w, format!("{p}.mlp.down_proj"))?,
                activation: config.activation,
            },
        });
    }
    let lm_head = if w.contains("lm_head.weight") { Some(linear(w, "lm_head".into())?) } else { None };
    Ok(Box::new(Llama {
        embed: Embedding { table: linear(w, "model.embed_tokens".into())? },
        norm: norm(w, "model.norm.weight".into())?,
        blocks,
        lm_head,
        config: config.clone(),
    }))
}

impl TextModel for Llama {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn forward(&self, tokens: &Array, cache: &mut KvCache) -> Result<Array> {
        let mut h = self.embed.forward(tokens)?;
        for (block, layer_cache) in self.blocks.iter().zip(cache.layers.iter_mut()) {
            let a = block.attention.forward(&block.input_norm.forward(&h)?, layer_cache)?;
            h = mlx_rs::ops::add(&h, &a)?;
            let m = block.mlp.forward(&block.post_attention_norm.forward(&h)?)?;
            h = mlx_rs::ops::add(&h, &m)?;
        }
        let last = self.norm.forward(&h.index((.., -1, ..)))?;
        let logits = match &self.lm_head {
            Some(head) => head.forward(&last)?,
            None => self.embed.as_logits(&last)?,
        };
        Ok(logits.as_dtype(Dtype::Float32)?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        for b in &self.blocks {
            let a = &b.attention;
            all.extend(a.qkv.arrays().into_iter().chain(b.mlp.gate_up.arrays()));
            all.extend(a.o_proj.arrays().into_iter().chain(b.mlp.down.arrays()));
            all.extend([b.input_norm.weight(), b.post_attention_norm.weight()]);
            all.extend(a.q_norm.iter().chain(&a.k_norm).map(RmsNorm::weight));
        }
        all.push(self.norm.weight());
        all.extend(self.lm_head.iter().flat_map(Linear::arrays));
        all
    }
}
