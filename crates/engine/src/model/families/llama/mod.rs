//! The Llama family: Llama 2/3.x, SmolLM2, Mistral-style dense models (Ministral 3's text
//! too: YaRN and its position-scaled queries come from the shared config), Qwen 2 and Qwen 3.
//!
//! They share one block (pre-norm attention, pre-norm gated MLP); Qwen 2's q/k/v biases and
//! Qwen 3's per-head q/k norms are read from the weights when present.

use mlx_rs::{ops, Array};
use serde_json::Value;

use crate::error::Result;
use crate::model::config::{ConfigDefaults, TextConfig};
use crate::model::family::Family;
use crate::model::layer_loader::{AttentionSpec, LayerLoader};
use crate::model::layers::{Attention, Embedding, Mlp, OutputHead, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, Output, Rows, TextModel};

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

impl Block {
    fn arrays(&self) -> Vec<&Array> {
        let mut all = self.attention.arrays();
        all.extend(self.mlp.arrays().into_iter().chain([self.input_norm.weight(), self.post_attention_norm.weight()]));
        all
    }
}

pub struct Llama {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    head: OutputHead,
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
        head: OutputHead { norm: l.norm("model.norm.weight")?, lm_head, softcap: None },
        blocks,
        config: config.clone(),
    })
}

impl Llama {
    /// tokens [1, L] → the input embeddings [1, L, hidden], for a wrapper that splices media rows in.
    pub fn embed_tokens(&self, tokens: &Array) -> Result<Array> {
        self.embed.forward(tokens)
    }
}

impl TextModel for Llama {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn accepts(&self) -> Accepts {
        Accepts { whole_sequences: true, ..Accepts::BATCHES_EVERY_POSITION }
    }

    /// Input embeddings (a wrapper's, with media rows) are read as text is: causally, token i
    /// at position i.
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let mut h = input.embeddings(|tokens| self.embed.forward(tokens))?;
        for (i, block) in self.blocks.iter().enumerate() {
            let a = rows.attend(i, &block.attention, &block.input_norm.forward(&h)?)?;
            h = ops::add(&h, &a)?;
            let m = block.mlp.forward(&block.post_attention_norm.forward(&h)?)?;
            h = ops::add(&h, &m)?;
        }
        self.head.finish(&self.embed, &h, compute)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        all.extend(self.blocks.iter().flat_map(Block::arrays));
        all.extend(self.head.arrays());
        all
    }
}
