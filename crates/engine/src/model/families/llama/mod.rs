//! The Llama family: Llama 2/3.x, SmolLM2, Mistral-style dense models, Qwen 2 and Qwen 3.
//!
//! They share one block (pre-norm attention, pre-norm gated MLP); Qwen 2's q/k/v biases and
//! Qwen 3's per-head q/k norms are read from the weights when present.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::Array;
use serde_json::Value;

use crate::error::Result;
use crate::model::config::{ConfigDefaults, TextConfig};
use crate::model::family::Family;
use crate::model::layers::{Attention, Embedding, Linear, Mlp, RmsNorm};
use crate::model::loader::{AttentionSpec, LayerLoader};
use crate::model::weights::Weights;
use crate::model::{BuildOptions, TextModel};
use crate::state::SequenceState;

pub const FAMILY: Family = Family {
    model_types: &["llama", "mistral", "qwen2", "qwen3"],
    // Qwen2's q/k/v projections have biases, which its config.json does not mention.
    defaults: |model_type| ConfigDefaults { attention_bias: model_type == "qwen2", ..ConfigDefaults::default() },
    build,
    encoder: None,
};

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

pub fn build(config: &TextConfig, _json: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    build_rotating(config, w, opts, |_| true)
}

/// A Llama whose layer `i` applies RoPE where `rotates(i)` says so (all layers for Llama
/// itself; SmolLM3 builds through this with its NoPE layers).
pub fn build_rotating(
    config: &TextConfig,
    w: &mut Weights,
    opts: &BuildOptions,
    rotates: impl Fn(usize) -> bool,
) -> Result<Box<dyn TextModel>> {
    let mut l = LayerLoader::new(w, config, opts, 0.0);
    let scale = (config.head_dim as f32).powf(-0.5);
    let mut blocks = Vec::with_capacity(config.num_layers);
    for i in 0..config.num_layers {
        let p = format!("model.layers.{i}");
        let spec = AttentionSpec { rope: Some(&config.rope).filter(|_| rotates(i)), scale, window: None };
        blocks.push(Block {
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            attention: l.attention(&p, spec)?,
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            mlp: l.mlp(&p)?,
        });
    }
    let lm_head = if l.weights.contains("lm_head.weight") { Some(l.linear("lm_head")?) } else { None };
    Ok(Box::new(Llama {
        embed: Embedding { table: l.linear("model.embed_tokens")? },
        norm: l.norm("model.norm.weight")?,
        blocks,
        lm_head,
        config: config.clone(),
    }))
}

impl Llama {
    /// tokens [B, L] → logits [B, vocab] of the last position (or [B, L, vocab] of every
    /// position, with `every`); `attend(layer, attention, x)` runs a block's attention against
    /// the state (one sequence's, or each row's).
    fn run(&self, tokens: &Array, every: bool, mut attend: impl FnMut(usize, &Attention, &Array) -> Result<Array>) -> Result<Array> {
        let mut h = self.embed.forward(tokens)?;
        for (i, block) in self.blocks.iter().enumerate() {
            let a = attend(i, &block.attention, &block.input_norm.forward(&h)?)?;
            h = mlx_rs::ops::add(&h, &a)?;
            let m = block.mlp.forward(&block.post_attention_norm.forward(&h)?)?;
            h = mlx_rs::ops::add(&h, &m)?;
        }
        let last = match every {
            true => self.norm.forward(&h)?,
            false => self.norm.forward(&h.index((.., -1, ..)))?,
        };
        match &self.lm_head {
            Some(head) => head.forward_f32(&last),
            None => self.embed.as_logits(&last),
        }
    }
}

impl TextModel for Llama {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn forward(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        self.run(tokens, false, |i, attention, x| attention.forward(x, state.layer_mut(i)?))
    }

    fn scores_every_position(&self) -> bool {
        true
    }

    fn forward_every(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        let logits = self.run(tokens, true, |i, attention, x| attention.forward(x, state.layer_mut(i)?))?;
        Ok(logits.reshape(&[tokens.dim(1), -1])?)
    }

    fn batches(&self) -> bool {
        true
    }

    fn forward_batch(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.run(tokens, false, |i, attention, x| {
            let mut layers = states.iter_mut().map(|s| s.layer_mut(i)).collect::<Result<Vec<_>>>()?;
            attention.forward_rows(x, &mut layers)
        })
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        for b in &self.blocks {
            all.extend(b.attention.arrays().into_iter().chain(b.mlp.arrays()));
            all.extend([b.input_norm.weight(), b.post_attention_norm.weight()]);
        }
        all.push(self.norm.weight());
        all.extend(self.lm_head.iter().flat_map(Linear::arrays));
        all
    }
}
