//! The text model: embeddings, the hybrid stack (pre-norm mixer, pre-norm feed-forward, both
//! residual), the final norm and the output head (tied or not).

use mlx_rs::{ops, Array};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::TextConfig;
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::{Attention, Embedding, FusedLinear, Mlp, OutputHead, RmsNorm, Rope};
use crate::model::weights::Weights;
use crate::model::{BuildOptions, Compute, Input, Output, Rows, TextModel};
use crate::state::{LayerState, StateKind};

use super::config::{convolution_layers, Lfm2Args};
use super::short_conv::ShortConv;

enum Mixing {
    Convolution(ShortConv),
    Attention(Box<Attention>),
}

impl Mixing {
    fn state_kind(&self) -> StateKind {
        match self {
            Mixing::Convolution(_) => StateKind::Convolution,
            Mixing::Attention(_) => StateKind::KeysValues,
        }
    }
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
    head: OutputHead,
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
    let lm_head = l.own_lm_head()?;
    Ok(Box::new(Lfm2 { config, embed, blocks, head: OutputHead { norm, lm_head, softcap: None } }))
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

impl TextModel for Lfm2 {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    /// Row i continues its own state; everything but attention and the convolution windows
    /// runs once for the batch.
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let mut h = input.embeddings(|tokens| self.embed.forward(tokens))?;
        let states = rows.states_for(&self.config.arch, self.blocks.len(), h.dim(0))?;
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
        self.head.finish(&self.embed, &h, compute)
    }

    /// Convolution layers keep their window, attention layers every key and value.
    fn state_kinds(&self) -> Vec<StateKind> {
        self.blocks.iter().map(|b| b.mixing.state_kind()).collect()
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
        all.extend(self.head.arrays());
        all
    }
}
