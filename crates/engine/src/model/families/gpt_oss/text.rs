//! The gpt-oss text model: pre-norm blocks of attention (with sinks; sliding or full) and the
//! mixture of experts.

use mlx_rs::{ops, Array};
use serde_json::Value;

use super::config::GptOssArgs;
use super::moe::Moe;
use crate::error::{EngineError, Result};
use crate::model::config::{LayerKind, TextConfig};
use crate::model::layer_loader::{AttentionSpec, LayerLoader};
use crate::model::layers::{Attention, Embedding, OutputHead, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{BuildOptions, Compute, Input, Output, Rows, TextModel};
use crate::state::StateKind;

struct Block {
    input_norm: RmsNorm,
    attention: Attention,
    post_attention_norm: RmsNorm,
    moe: Moe,
}

pub struct GptOss {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    head: OutputHead,
}

pub fn build(config: &TextConfig, raw: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let source = w.source().to_path_buf();
    let bad_config = |reason: String| EngineError::ModelFormat { path: source.clone(), reason };
    let raw = raw.ok_or_else(|| bad_config("gpt-oss loads from a Hugging Face folder (config.json and safetensors)".into()))?;
    let args = GptOssArgs::from_json(raw.get("text_config").unwrap_or(raw)).map_err(bad_config)?;
    let config = args.text_config(config).map_err(bad_config)?;
    let mut l = LayerLoader::new(w, &config, opts, 0.0);
    let scale = (config.head_dim as f32).powf(-0.5);
    let mut blocks = Vec::with_capacity(config.num_layers);
    for (i, kind) in config.layer_kinds.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let spec = AttentionSpec {
            rope: Some(&config.rope),
            scale,
            window: if *kind == LayerKind::Sliding { config.sliding_window } else { None },
        };
        let mut attention = l.attention(&p, spec)?;
        let sinks = l.weights.take(&format!("{p}.self_attn.sinks"))?;
        if sinks.shape() != [config.num_heads as i32] {
            return Err(EngineError::CorruptWeights {
                path: l.weights.source().into(),
                reason: format!("`{p}.self_attn.sinks` is {:?}; expected one per head, [{}]", sinks.shape(), config.num_heads),
            });
        }
        attention.sinks = Some(sinks.as_dtype(l.dtype)?);
        blocks.push(Block {
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            attention,
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            moe: Moe::load(&mut l, &p, args.num_local_experts, args.num_experts_per_tok, args.swiglu_alpha, args.swiglu_limit)?,
        });
    }
    let embed = Embedding { table: l.linear("model.embed_tokens")? };
    let norm = l.norm("model.norm.weight")?;
    let lm_head = if config.tie_word_embeddings { None } else { Some(l.linear("lm_head")?) };
    Ok(Box::new(GptOss { config, embed, blocks, head: OutputHead { norm, lm_head, softcap: None } }))
}

impl TextModel for GptOss {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    /// The projections and experts once for the batch; attention per row against its own keys
    /// and values (or window).
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let mut h = input.embeddings(|tokens| self.embed.forward(tokens))?;
        for (i, b) in self.blocks.iter().enumerate() {
            h = ops::add(&h, &rows.attend(i, &b.attention, &b.input_norm.forward(&h)?)?)?;
            h = ops::add(&h, &b.moe.forward(&b.post_attention_norm.forward(&h)?)?)?;
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
            all.extend(b.attention.arrays().into_iter().chain(b.moe.arrays()));
            all.extend([&b.input_norm, &b.post_attention_norm].into_iter().map(RmsNorm::weight));
        }
        all.extend(self.head.arrays());
        all
    }
}
