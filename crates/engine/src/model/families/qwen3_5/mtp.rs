//! The multi-token-prediction head (`mtp.*`) of published Qwen3.5 and Qwen3-Next checkpoints, as
//! mlx-vlm 0.7.10's `Qwen3_5MTPDraftModel` computes it (vLLM's `qwen3_next_mtp` is the same
//! formula): h = fc([pre_fc_norm_embedding(embed(next token)); pre_fc_norm_hidden(hidden)]),
//! then `mtp_num_hidden_layers` full-attention decoder layers (this family's gated attention and
//! its dense or MoE feed-forward) with keys and values of their own, then the head's final norm;
//! logits through the model's output head. Every norm is zero-centred as the model's are.

use mlx_rs::{ops, Array};

use crate::error::Result;
use crate::model::config::RopeConfig;
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::{Linear, RmsNorm};
use crate::state::SequenceState;

use super::attention::GatedAttention;
use super::block::{placements, Block, FeedForward, Mixing};
use super::config::{Qwen35Args, Variant};
use super::moe::SparseMoe;

pub struct MtpHead {
    fc: Linear,
    pre_fc_norm_embedding: RmsNorm,
    pre_fc_norm_hidden: RmsNorm,
    layers: Vec<Block>,
    norm: RmsNorm,
}

impl MtpHead {
    /// The head under `mtp.`, where the checkpoint carries one (`None` without `mtp.fc`).
    pub fn load(l: &mut LayerLoader, args: &Qwen35Args, rope: &RopeConfig) -> Result<Option<Self>> {
        if !l.weights.contains("mtp.fc.weight") {
            return Ok(None);
        }
        let mut layers = vec![];
        while l.weights.contains(&format!("mtp.layers.{}.input_layernorm.weight", layers.len())) {
            let p = format!("mtp.layers.{}", layers.len());
            let k = &args.keys;
            let feed_forward = match args.variant != Variant::Dense && k.num_experts > 0 {
                true => {
                    let normalize = k.norm_topk_prob || args.variant != Variant::Next;
                    FeedForward::Moe(Box::new(SparseMoe::load(l, &p, k.num_experts, k.num_experts_per_tok, normalize)?))
                }
                false => FeedForward::Dense(l.mlp(&p)?),
            };
            layers.push(Block {
                input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
                mixing: Mixing::Attention(GatedAttention::load(l, &p, rope, args.rotary_dim)?),
                post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
                feed_forward,
            });
        }
        Ok(Some(Self {
            fc: l.linear("mtp.fc")?,
            pre_fc_norm_embedding: l.norm("mtp.pre_fc_norm_embedding.weight")?,
            pre_fc_norm_hidden: l.norm("mtp.pre_fc_norm_hidden.weight")?,
            layers,
            norm: l.norm("mtp.norm.weight")?,
        }))
    }

    /// embeds [1, L, hidden] (of the next tokens) and hidden [1, L, hidden] → the head's hidden
    /// states [1, L, hidden]; `state` grows by L.
    pub fn forward(&self, embeds: &Array, hidden: &Array, state: &mut SequenceState) -> Result<Array> {
        let joined = ops::concatenate(&[self.pre_fc_norm_embedding.forward(embeds)?, self.pre_fc_norm_hidden.forward(hidden)?], -1)?;
        let mut h = self.fc.forward(&joined)?;
        let mut states = [state];
        let placements = placements(&states, None);
        for (i, layer) in self.layers.iter().enumerate() {
            h = layer.forward(&h, &mut states, i, &placements)?;
        }
        self.norm.forward(&h)
    }

    /// Its decoder layers (each keeps keys and values).
    pub fn layers(&self) -> usize {
        self.layers.len()
    }

    pub fn arrays(&self) -> Vec<&Array> {
        let mut all = self.fc.arrays();
        all.extend(self.layers.iter().flat_map(Block::arrays));
        all.extend([self.pre_fc_norm_embedding.weight(), self.pre_fc_norm_hidden.weight(), self.norm.weight()]);
        all
    }
}
