//! The Llama family: Llama 2/3.x, SmolLM2, Mistral-style dense models (Ministral 3's text
//! too: YaRN and its position-scaled queries come from the shared config), Qwen 2 and Qwen 3.
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
use crate::model::{AttentionMode, BuildOptions, TextModel};
use crate::state::SequenceState;

pub const FAMILY: Family = Family {
    model_types: &["llama", "mistral", "ministral3", "qwen2", "qwen3"],
    denoising: false,
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
    Ok(Box::new(build_llama(config, w, opts, rotates)?))
}

/// The Llama itself, for families that wrap it (a multimodal model's text side).
pub fn build_llama(config: &TextConfig, w: &mut Weights, opts: &BuildOptions, rotates: impl Fn(usize) -> bool) -> Result<Llama> {
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
    Ok(Llama {
        embed: Embedding { table: l.linear("model.embed_tokens")? },
        norm: l.norm("model.norm.weight")?,
        blocks,
        lm_head,
        config: config.clone(),
    })
}

impl Llama {
    /// tokens [B, L] → logits [B, vocab] of the last position (or [B, L, vocab] of every
    /// position, with `every`); `attend(layer, attention, x)` runs a block's attention against
    /// the state (one sequence's, or each row's).
    fn run(&self, tokens: &Array, every: bool, attend: impl FnMut(usize, &Attention, &Array) -> Result<Array>) -> Result<Array> {
        self.run_hidden(self.embed.forward(tokens)?, every, attend)
    }

    /// tokens [1, L] → the input embeddings [1, L, hidden], for a wrapper that splices media rows in.
    pub fn embed_tokens(&self, tokens: &Array) -> Result<Array> {
        self.embed.forward(tokens)
    }

    /// Input embeddings [1, L, hidden] through one sequence's state → the last position's
    /// logits; token i sits at position i of the sequence (no multimodal RoPE).
    pub fn forward_hidden(&self, embeds: &Array, state: &mut SequenceState) -> Result<Array> {
        self.run_hidden(embeds.clone(), false, |i, attention, x| attention.forward(x, state.layer_mut(i)?))
    }

    /// `run` from input embeddings [B, L, hidden] instead of ids.
    fn run_hidden(&self, h: Array, every: bool, attend: impl FnMut(usize, &Attention, &Array) -> Result<Array>) -> Result<Array> {
        let h = self.run_blocks(h, attend)?;
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

impl Llama {
    /// The decoder blocks over input embeddings [B, L, hidden], before the final norm.
    fn run_blocks(&self, mut h: Array, mut attend: impl FnMut(usize, &Attention, &Array) -> Result<Array>) -> Result<Array> {
        for (i, block) in self.blocks.iter().enumerate() {
            let a = attend(i, &block.attention, &block.input_norm.forward(&h)?)?;
            h = mlx_rs::ops::add(&h, &a)?;
            let m = block.mlp.forward(&block.post_attention_norm.forward(&h)?)?;
            h = mlx_rs::ops::add(&h, &m)?;
        }
        Ok(h)
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

    fn forward_batch_every(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.run(tokens, true, |i, attention, x| {
            let mut layers = states.iter_mut().map(|s| s.layer_mut(i)).collect::<Result<Vec<_>>>()?;
            attention.forward_rows(x, &mut layers)
        })
    }

    fn gives_hidden_states(&self) -> bool {
        true
    }

    fn hidden_states(&self, tokens: &Array, mode: AttentionMode) -> Result<Array> {
        let h = self.run_blocks(self.embed.forward(tokens)?, |_, attention, x| attention.forward_whole(x, mode))?;
        self.norm.forward(&h)
    }

    fn pads_hidden_states(&self) -> bool {
        true
    }

    fn hidden_states_padded(&self, tokens: &Array, lengths: &[usize], mode: AttentionMode) -> Result<Array> {
        let h = self.run_blocks(self.embed.forward(tokens)?, |_, attention, x| attention.forward_whole_padded(x, mode, lengths))?;
        self.norm.forward(&h)
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
