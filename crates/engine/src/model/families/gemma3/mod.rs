//! Gemma 3 (text): interleaved sliding-window and global layers with their own RoPE bases,
//! embeddings scaled by √hidden, four norms per block storing `weight - 1`, GELU (tanh) MLP,
//! per-head q/k norms, and final-logit soft-capping where the config asks for it.

use mlx_rs::{ops, Array};
use serde_json::Value;

use crate::error::Result;
use crate::model::config::{ConfigDefaults, LayerKind, TextConfig};
use crate::model::family::Family;
use crate::model::layer_loader::{AttentionSpec, LayerLoader};
use crate::model::layers::{Attention, Embedding, Mlp, OutputHead, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, Output, Rows, TextModel};
use crate::state::StateKind;

pub const FAMILY: Family = Family { model_types: &["gemma3_text"], denoising: false, defaults: |_| defaults(), build, encoder: None };

/// What Gemma's config.json files leave out: tied embeddings, RoPE θ 10⁶ and, in transformers 4
/// keys, `sliding_window_pattern`.
pub fn defaults() -> ConfigDefaults {
    ConfigDefaults { rope_theta: 1_000_000.0, tie_word_embeddings: true, attention_bias: false, sliding_window_pattern: true }
}

struct Block {
    input_norm: RmsNorm,
    attention: Attention,
    post_attention_norm: RmsNorm,
    pre_feedforward_norm: RmsNorm,
    mlp: Mlp,
    post_feedforward_norm: RmsNorm,
}

pub struct Gemma3 {
    config: TextConfig,
    embed: Embedding,
    embed_scale: Array,
    blocks: Vec<Block>,
    head: OutputHead,
}

/// Gemma's norms multiply by `1 + weight`.
const NORM_OFFSET: f32 = 1.0;

/// A vision-language checkpoint's tower and projector: it loads as text-only.
const VISION: &[&str] = &["vision_tower.", "multi_modal_projector.", "model.vision_tower.", "model.multi_modal_projector."];

pub fn build(config: &TextConfig, _json: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    w.drop_prefixed(VISION);
    let mut l = LayerLoader::new(w, config, opts, NORM_OFFSET);
    let scale = config.query_pre_attn_scalar.unwrap_or(config.head_dim as f32).powf(-0.5);
    let mut blocks = Vec::with_capacity(config.num_layers);
    for (i, kind) in config.layer_kinds.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let sliding = *kind == LayerKind::Sliding;
        let spec = AttentionSpec {
            rope: Some(config.rope_local.as_ref().filter(|_| sliding).unwrap_or(&config.rope)),
            scale,
            window: if sliding { config.sliding_window } else { None },
        };
        blocks.push(Block {
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            attention: l.attention(&p, spec)?,
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            pre_feedforward_norm: l.norm(&format!("{p}.pre_feedforward_layernorm.weight"))?,
            mlp: l.mlp(&p)?,
            post_feedforward_norm: l.norm(&format!("{p}.post_feedforward_layernorm.weight"))?,
        });
    }
    Ok(Box::new(Gemma3 {
        embed: Embedding { table: l.linear("model.embed_tokens")? },
        // transformers rounds √hidden to the embedding dtype before multiplying.
        embed_scale: Array::from_f32((config.hidden_size as f32).sqrt()).as_dtype(l.dtype)?,
        head: OutputHead { norm: l.norm("model.norm.weight")?, lm_head: None, softcap: config.final_logit_softcap },
        blocks,
        config: config.clone(),
    }))
}

impl TextModel for Gemma3 {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn accepts(&self) -> Accepts {
        Accepts { whole_sequences: true, ..Accepts::BATCHES_EVERY_POSITION }
    }

    /// Sliding layers attend against their window: a row's own in a batch; read whole, behind
    /// the position when causal, centred on it when bidirectional (EmbeddingGemma).
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let mut h = input.embeddings(|tokens| Ok(ops::multiply(&self.embed.forward(tokens)?, &self.embed_scale)?))?;
        for (i, b) in self.blocks.iter().enumerate() {
            let a = rows.attend(i, &b.attention, &b.input_norm.forward(&h)?)?;
            h = ops::add(&h, &b.post_attention_norm.forward(&a)?)?;
            let m = b.mlp.forward(&b.pre_feedforward_norm.forward(&h)?)?;
            h = ops::add(&h, &b.post_feedforward_norm.forward(&m)?)?;
        }
        self.head.finish(&self.embed, &h, compute)
    }

    /// Sliding layers keep only their window.
    fn state_kinds(&self) -> Vec<StateKind> {
        self.blocks.iter().map(|b| b.attention.state_kind()).collect()
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        for b in &self.blocks {
            all.extend(b.attention.arrays().into_iter().chain(b.mlp.arrays()));
            let norms = [&b.input_norm, &b.post_attention_norm, &b.pre_feedforward_norm, &b.post_feedforward_norm];
            all.extend(norms.into_iter().map(RmsNorm::weight));
        }
        all.extend(self.head.arrays());
        all
    }
}
