//! The text model: embeddings, the hybrid stack (pre-norm mixer, pre-norm feed-forward, both
//! residual), the final norm and the output head (tied or not).

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::TextConfig;
use crate::model::layers::{Attention, Embedding, FusedLinear, Linear, Mlp, RmsNorm, Rope};
use crate::model::loader::LayerLoader;
use crate::model::weights::Weights;
use crate::model::{BuildOptions, TextModel};
use crate::state::{LayerState, SequenceState, StateKind};

use super::config::{convolution_layers, Lfm2Args};
use super::short_conv::ShortConv;

enum Mixing {
    Convolution(ShortConv),
    Attention(Box<Attention>),
}

struct Block {
    operator_norm: RmsNorm,
    mixing: Mixing,
    ffn_norm: RmsNorm,
    feed_forward: Mlp,
}

pub struct Lfm2 {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    norm: RmsNorm,
    /// None when the output head is tied to the embeddings.
    lm_head: Option<Linear>,
}

pub fn build(config: &TextConfig, raw: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let source = w.source().to_path_buf();
    let bad_config = |reason: String| EngineError::ModelFormat { path: source.clone(), reason };
    let args = match raw {
        Some(raw) => Lfm2Args::from_json(raw).map_err(bad_config)?,
        None => Lfm2Args::for_gguf(config),
    };
    let config = args.text_config(config);
    let convolutions = convolution_layers(&config).map_err(bad_config)?;
    let mut l = LayerLoader::new(w, &config, opts, 0.0);

    let mut blocks = Vec::with_capacity(config.num_layers);
    for (i, &convolution) in convolutions.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let mixing = if convolution {
            Mixing::Convolution(ShortConv::load(&mut l, &p, (args.conv_cache > 0).then_some(args.conv_cache), args.conv_bias)?)
        } else {
            Mixing::Attention(Box::new(attention(&mut l, &p)?))
        };
        blocks.push(Block {
            operator_norm: l.norm(&format!("{p}.operator_norm.weight"))?,
            mixing,
            ffn_norm: l.norm(&format!("{p}.ffn_norm.weight"))?,
            feed_forward: feed_forward(&mut l, &p)?,
        });
    }
    let embed = Embedding { table: l.linear("model.embed_tokens")? };
    let norm = l.norm("model.embedding_norm.weight")?;
    let lm_head = if config.tie_word_embeddings {
        // A tied checkpoint may still carry a copy of the head; the embeddings are used.
        let copies: Vec<String> = l.weights.remaining().filter(|n| n.starts_with("lm_head.")).cloned().collect();
        for name in copies {
            l.weights.take_optional(&name);
        }
        None
    } else {
        Some(l.linear("lm_head")?)
    };
    Ok(Box::new(Lfm2 { config, embed, blocks, norm, lm_head }))
}

/// `{prefix}.self_attn`: q/k/v (fused), per-head q/k layer norms, `out_proj`, full RoPE.
fn attention(l: &mut LayerLoader, prefix: &str) -> Result<Attention> {
    let p = format!("{prefix}.self_attn");
    let c = l.config;
    let parts = ["q_proj", "k_proj", "v_proj"].iter().map(|n| l.linear(&format!("{p}.{n}"))).collect::<Result<Vec<_>>>()?;
    Ok(Attention {
        qkv: FusedLinear::new(parts)?,
        o_proj: l.linear(&format!("{p}.out_proj"))?,
        q_norm: Some(l.norm(&format!("{p}.q_layernorm.weight"))?),
        k_norm: Some(l.norm(&format!("{p}.k_layernorm.weight"))?),
        v_norm: None,
        values_from_keys: false,
        num_heads: c.num_heads,
        num_kv_heads: c.num_kv_heads,
        head_dim: c.head_dim,
        scale: (c.head_dim as f32).powf(-0.5),
        rope: Some(Rope::new(c.head_dim, &c.rope, c.rope_traditional)),
        window: None,
        sinks: None,
        query_scale: c.query_position_scale,
    })
}

/// `{prefix}.feed_forward`: w2(silu(w1(x)) · w3(x)), its width checked against the config's rules.
fn feed_forward(l: &mut LayerLoader, prefix: &str) -> Result<Mlp> {
    let p = format!("{prefix}.feed_forward");
    let (gate, up) = (l.linear(&format!("{p}.w1"))?, l.linear(&format!("{p}.w3"))?);
    let expected = l.config.intermediate_size;
    if gate.out_features() as usize != expected {
        let reason = format!(
            "`{p}.w1` has {} rows; the config's feed-forward rules (block_ff_dim or intermediate_size, \
             block_auto_adjust_ff_dim, block_ffn_dim_multiplier, block_multiple_of) make {expected}",
            gate.out_features()
        );
        return Err(EngineError::CorruptWeights { path: l.weights.source().into(), reason });
    }
    Ok(Mlp { gate_up: FusedLinear::new(vec![gate, up])?, down: l.linear(&format!("{p}.w2"))?, activation: l.config.activation })
}

impl Lfm2 {
    /// Hidden states [B, L, hidden] through the stack, row i continuing `states[i]`; logits
    /// [B, vocab] of the last position (`every`: [B, L, vocab]). Everything but attention and the convolution windows
    /// runs once for the batch.
    fn run(&self, mut h: Array, states: &mut [&mut SequenceState], every: bool) -> Result<Array> {
        if let Some(state) = states.iter().find(|s| s.layers.len() != self.blocks.len()) {
            return Err(EngineError::Internal(format!("the state has {} layers but the model {}", state.layers.len(), self.blocks.len())));
        }
        if h.dim(0) as usize != states.len() {
            return Err(EngineError::Internal(format!("{} rows for {} sequences", h.dim(0), states.len())));
        }
        for (i, b) in self.blocks.iter().enumerate() {
            let x = b.operator_norm.forward(&h)?;
            let mixed = match &b.mixing {
                Mixing::Convolution(conv) => {
                    let mut windows = states.iter_mut().map(|s| s.layers[i].convolution_mut()).collect::<Result<Vec<_>>>()?;
                    conv.forward_rows(&x, &mut windows)?
                }
                Mixing::Attention(a) => {
                    let mut layers: Vec<&mut LayerState> = states.iter_mut().map(|s| &mut s.layers[i]).collect();
                    a.forward_rows(&x, &mut layers)?
                }
            };
            h = ops::add(&h, &mixed)?;
            h = ops::add(&h, &b.feed_forward.forward(&b.ffn_norm.forward(&h)?)?)?;
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

impl TextModel for Lfm2 {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn forward(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        self.run(self.embed.forward(tokens)?, &mut [state], false)
    }

    fn scores_every_position(&self) -> bool {
        true
    }

    fn forward_every(&self, tokens: &Array, state: &mut SequenceState) -> Result<Array> {
        let logits = self.run(self.embed.forward(tokens)?, &mut [state], true)?;
        Ok(logits.reshape(&[tokens.dim(1), -1])?)
    }

    fn forward_batch_every(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.run(self.embed.forward(tokens)?, states, true)
    }

    fn batches(&self) -> bool {
        true
    }

    fn forward_batch(&self, tokens: &Array, states: &mut [&mut SequenceState]) -> Result<Array> {
        self.run(self.embed.forward(tokens)?, states, false)
    }

    /// Convolution layers keep their window, attention layers every key and value.
    fn state_kinds(&self) -> Vec<StateKind> {
        self.blocks
            .iter()
            .map(|b| match b.mixing {
                Mixing::Convolution(_) => StateKind::Convolution,
                Mixing::Attention(_) => StateKind::KeysValues,
            })
            .collect()
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        for b in &self.blocks {
            all.extend(match &b.mixing {
                Mixing::Convolution(c) => c.arrays(),
                Mixing::Attention(a) => a.arrays(),
            });
            all.extend(b.feed_forward.arrays());
            all.extend([b.operator_norm.weight(), b.ffn_norm.weight()]);
        }
        all.push(self.norm.weight());
        all.extend(self.lm_head.iter().flat_map(Linear::arrays));
        all
    }
}
