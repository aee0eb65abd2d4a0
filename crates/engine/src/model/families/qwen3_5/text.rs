//! The text model: embeddings, the hybrid stack (pre-norm mixer, pre-norm feed-forward, both
//! residual), the final norm and the output head (tied or not).

use mlx_rs::Array;
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::TextConfig;
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::mrope::MultiAxisRope;
use crate::model::layers::{Embedding, OutputHead};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, MultiTokenPredictor, Output, Rows, TextModel};
use crate::state::{SequenceState, StateKind};

use super::attention::GatedAttention;
use super::block::{placements, Block, FeedForward, Mixing};
use super::config::{Mixer, Qwen35Args, Variant};
use super::delta_net::{conv_is_mlx, conv_weight, DeltaNet};
use super::moe::SparseMoe;
use super::mtp::MtpHead;

pub struct Qwen35 {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    head: OutputHead,
    /// Multimodal RoPE and the image placeholder's id, for checkpoints with a vision tower.
    vision: Option<(MultiAxisRope, u32)>,
    /// The multi-token-prediction head, for checkpoints that carry one (`mtp.*`).
    mtp: Option<MtpHead>,
}

/// Tensors of checkpoints whose text model is all we load: the vision tower (Qwen3.5 is
/// vision-language; transformers 5 names it `model.visual.*`, mlx-vlm `vision_tower.*`).
const NOT_TEXT: &[&str] = &["model.visual.", "visual.", "vision_tower.", "model.vision_tower."];

pub fn build(config: &TextConfig, raw: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let source = w.source().to_path_buf();
    let bad_config = |reason: String| EngineError::ModelFormat { path: source.clone(), reason };
    let raw =
        raw.ok_or_else(|| bad_config(format!("{} loads from a Hugging Face or MLX folder (config.json and *.safetensors)", config.arch)))?;
    let args = Qwen35Args::from_json(raw, config).map_err(bad_config)?;
    let config = args.text_config(config);
    let corrupt = |reason: String| EngineError::CorruptWeights { path: source.clone(), reason };

    w.drop_prefixed(NOT_TEXT);
    w.rename_prefixed("model.mtp.", "mtp.");

    // The convolution weights tell the layouts apart: PyTorch's [C, 1, K] with zero-centred norms
    // (Hugging Face), or mlx-lm's [C, K, 1] with the norms stored as 1 + w.
    let mut convs = Vec::new();
    for (i, mixer) in args.mixers.iter().enumerate() {
        if *mixer == Mixer::Linear {
            let name = format!("model.layers.{i}.linear_attn.conv1d.weight");
            let stored = w.take(&name)?;
            convs.push((name, stored));
        }
    }
    let mlx = match convs.iter().find_map(|(_, c)| conv_is_mlx(c)) {
        Some(mlx) => mlx,
        None => config.quantization.is_some(),
    };
    let mut l = LayerLoader::new(w, &config, opts, if mlx { 0.0 } else { 1.0 });

    let mut blocks = Vec::with_capacity(config.num_layers);
    let mut convs = convs.into_iter();
    for (i, mixer) in args.mixers.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let mixing = match mixer {
            Mixer::Linear => {
                let (name, stored) = convs.next().expect("one convolution per linear layer");
                let conv = conv_weight(&stored, mlx, &name, &args).map_err(corrupt)?.as_dtype(l.dtype)?;
                Mixing::Linear(DeltaNet::load(&mut l, &p, &args, &conv)?)
            }
            Mixer::Full => Mixing::Attention(GatedAttention::load(&mut l, &p, &config.rope, args.rotary_dim)?),
        };
        let k = &args.keys;
        let feed_forward = if args.is_moe(i) {
            let normalize = k.norm_topk_prob || args.variant != Variant::Next;
            FeedForward::Moe(Box::new(SparseMoe::load(&mut l, &p, k.num_experts, k.num_experts_per_tok, normalize)?))
        } else {
            FeedForward::Dense(l.mlp(&p)?)
        };
        blocks.push(Block {
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            mixing,
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            feed_forward,
        });
    }
    let mtp = MtpHead::load(&mut l, &args, &config.rope)?;
    let embed = Embedding { table: l.linear("model.embed_tokens")? };
    let norm = l.norm("model.norm.weight")?;
    let lm_head = l.own_lm_head()?;

    let vision = if args.has_vision {
        let text = raw.get("text_config").filter(|t| t.is_object()).unwrap_or(raw);
        let section = text.get("rope_parameters").and_then(|r| r.get("mrope_section")).cloned();
        let section: Vec<usize> = match section {
            Some(v) => serde_json::from_value(v).map_err(|e| bad_config(format!("mrope_section is not a list of sizes ({e})")))?,
            None => vec![11, 11, 10],
        };
        let [t, h, w] = section[..] else {
            return Err(bad_config(format!("mrope_section has {} entries; time, height and width need 3", section.len())));
        };
        if 2 * (t + h + w) != args.rotary_dim {
            return Err(bad_config(format!("mrope_section {section:?} does not cover the {} rotated frequencies", args.rotary_dim / 2)));
        }
        let image = raw.get("image_token_id").and_then(Value::as_u64).unwrap_or(248_056) as u32;
        Some((MultiAxisRope::new(args.rotary_dim, config.rope.theta, [t, h, w]), image))
    } else {
        None
    };

    Ok(Box::new(Qwen35 { embed, blocks, head: OutputHead { norm, lm_head, softcap: None }, config, vision, mtp }))
}

impl TextModel for Qwen35 {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn accepts(&self) -> Accepts {
        Accepts { media_pad_id: self.vision.as_ref().map(|(_, id)| *id), ..Accepts::BATCHES_EVERY_POSITION }
    }

    /// Row i continues its own state, its attention layers placing its tokens at multimodal
    /// positions where a prompt with images gives them (the next token then goes one past the
    /// furthest: the rope delta, kept with the state), elsewhere at their index plus the row's
    /// shift (rows that followed an image). Everything but attention and the recurrent rule's
    /// state runs once for the batch.
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let (mut h, rotation) = match &input {
            Input::Tokens(tokens) => (self.embed.forward(tokens)?, None),
            Input::Embeddings(media) => {
                let Some((rope, _)) = &self.vision else {
                    return Err(EngineError::invalid("input", format!("{} takes token ids only", self.config.arch)));
                };
                (media.embeds.clone(), media.positions.map(|p| rope.rotation(p)).transpose()?)
            }
        };
        let states = rows.states_for(&self.config.arch, self.blocks.len(), h.dim(0))?;
        if rotation.is_some() && states.len() != 1 {
            return Err(EngineError::Internal(format!("multimodal positions for {} sequences", states.len())));
        }
        let placements = placements(states, rotation.as_ref());
        for (i, b) in self.blocks.iter().enumerate() {
            h = b.forward(&h, states, i, &placements)?;
        }
        let output = self.head.finish(&self.embed, &h, compute)?;
        if let Input::Embeddings(media) = &input {
            media.continue_past_positions(states[0])?;
        }
        Ok(output)
    }

    fn mtp(&self) -> Option<&dyn MultiTokenPredictor> {
        self.mtp.as_ref().map(|_| self as &dyn MultiTokenPredictor)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        match self.vision {
            Some(_) => self.embed.forward(tokens),
            None => Err(EngineError::invalid("input", format!("{} takes token ids only", self.config.arch))),
        }
    }

    /// Linear-attention layers keep recurrent state, attention layers every key and value.
    fn state_kinds(&self) -> Vec<StateKind> {
        self.blocks.iter().map(|b| b.mixing.state_kind()).collect()
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        all.extend(self.blocks.iter().flat_map(Block::arrays));
        all.extend(self.head.arrays());
        all.extend(self.mtp.iter().flat_map(MtpHead::arrays));
        all
    }
}

/// The head drafts through the model's embeddings and output head.
impl MultiTokenPredictor for Qwen35 {
    fn mtp_forward(&self, tokens: &Array, hidden: &Array, state: &mut SequenceState) -> Result<Array> {
        let head = self.mtp.as_ref().ok_or_else(|| EngineError::Internal("the model has no multi-token-prediction head".into()))?;
        head.forward(&self.embed.forward(tokens)?, hidden, state)
    }

    fn mtp_logits(&self, hidden: &Array) -> Result<Array> {
        self.head.logits(&self.embed, hidden)
    }

    fn mtp_state(&self) -> SequenceState {
        let layers = self.mtp.as_ref().map_or(0, MtpHead::layers);
        SequenceState::new(&vec![StateKind::KeysValues; layers])
    }
}
