//! The text model: Qwen 3's decoder (per-head q/k norms; a gated MLP, or for `qwen3_vl_moe`
//! routed experts) with multimodal RoPE and deepstack.
//!
//! Multimodal RoPE: each token has a position on three axes (time, height, width). Text tokens
//! have the same one on all three; an image's tokens take their grid coordinates (see
//! `processor::token_positions`). Of the head's `head_dim / 2` frequencies, every third from
//! 1 (below 3 × the height section) follows height, every third from 2 (below 3 × the width
//! section) follows width, the rest time, as transformers 5 interleaves them. Positions come
//! from `EmbeddingsInput::positions` in a prompt with images; elsewhere (text, decode) token i
//! sits at i plus the state's position shift, which a prompt with images leaves behind (its
//! last position + 1 − its length: the rope delta).
//!
//! Deepstack: the tower's extra rows (`EmbeddingsInput::layer_additions`) are added to the
//! hidden states after the first decoder layers.

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::TextConfig;
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::attention;
use crate::model::layers::mrope::{MultiAxisRope, Rotation};
use crate::model::layers::switch_glu::{route, ExpertWeights, SwitchGlu};
use crate::model::layers::{Embedding, FusedLinear, Linear, Mlp, OutputHead, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, Output, Rows, TextModel};
use crate::state::{LayerState, SequenceState};

use super::config::TextArgs;

/// Tensors the text model does not read: the vision tower's (loaded by the encoder; mlx-vlm
/// names it `vision_tower`).
const NOT_TEXT: &[&str] = &["model.visual.", "visual.", "vision_tower.", "model.vision_tower."];

struct Attention {
    qkv: FusedLinear,
    o_proj: Linear,
    q_norm: RmsNorm,
    k_norm: RmsNorm,
    heads: i32,
    kv_heads: i32,
    head_dim: i32,
    scale: f32,
}

/// `qwen3_vl_moe`: a softmax router picks the top-k experts (weights renormalised to sum to 1);
/// no shared expert.
struct SparseMoe {
    router: Linear,
    top_k: i32,
    experts: SwitchGlu,
}

enum FeedForward {
    Dense(Mlp),
    Moe(Box<SparseMoe>),
}

impl FeedForward {
    fn forward(&self, x: &Array) -> Result<Array> {
        match self {
            FeedForward::Dense(mlp) => mlp.forward(x),
            FeedForward::Moe(moe) => {
                let shape = x.shape().to_vec();
                let flat = x.reshape(&[-1, shape[2]])?;
                let (experts, weights) = route(&moe.router.forward(&flat)?, moe.top_k, true, x.dtype())?;
                Ok(moe.experts.forward(&flat, &experts, &weights)?.reshape(&shape)?)
            }
        }
    }

    fn arrays(&self) -> Vec<&Array> {
        match self {
            FeedForward::Dense(mlp) => mlp.arrays(),
            FeedForward::Moe(moe) => moe.router.arrays().into_iter().chain(moe.experts.arrays()).collect(),
        }
    }
}

/// The MoE keys of a `qwen3_vl_moe_text` config.
#[derive(serde::Deserialize)]
struct MoeKeys {
    /// Released configs say `num_experts`; transformers 5 writes `num_local_experts`.
    #[serde(alias = "num_local_experts")]
    num_experts: usize,
    num_experts_per_tok: usize,
    moe_intermediate_size: usize,
    #[serde(default = "one")]
    decoder_sparse_step: usize,
    #[serde(default)]
    mlp_only_layers: Option<Vec<usize>>,
}

fn one() -> usize {
    1
}

impl MoeKeys {
    /// Whether layer `i` routes to experts, as transformers decides.
    fn sparse(&self, i: usize) -> bool {
        !self.mlp_only_layers.as_deref().unwrap_or_default().contains(&i)
            && self.num_experts > 0
            && (i + 1).is_multiple_of(self.decoder_sparse_step.max(1))
    }
}

/// `{p}.mlp.experts.gate_up_proj` and `down_proj`, fused, as released ([E, hidden, 2 × width]
/// and [E, width, hidden]) or as transformers holds them ([E, 2 × width, hidden] and
/// [E, hidden, width]); told apart by shape.
fn load_experts(l: &mut LayerLoader, p: &str, keys: &MoeKeys) -> Result<SwitchGlu> {
    let hidden = l.config.hidden_size as i32;
    let width = keys.moe_intermediate_size as i32;
    let experts = keys.num_experts as i32;
    let corrupt = |l: &LayerLoader, name: &str, shape: &[i32]| {
        EngineError::CorruptWeights {
        path: l.weights.source().into(),
        reason: format!("`{name}` has shape {shape:?}; {experts} experts of width {width} over hidden {hidden} need [{experts}, {hidden}, {}] or [{experts}, {}, {hidden}]", 2 * width, 2 * width),
    }
    };
    let gate_up_name = format!("{p}.mlp.experts.gate_up_proj");
    let gate_up = l.weights.take(&gate_up_name)?.as_dtype(l.dtype)?;
    let gate_up = match gate_up.shape() {
        [e, h, w] if *e == experts && *h == hidden && *w == 2 * width => gate_up.transpose_axes(&[0, 2, 1])?,
        [e, w, h] if *e == experts && *h == hidden && *w == 2 * width => gate_up,
        shape => return Err(corrupt(l, &gate_up_name, shape)),
    };
    let down_name = format!("{p}.mlp.experts.down_proj");
    let down = l.weights.take(&down_name)?.as_dtype(l.dtype)?;
    let down = match down.shape() {
        [e, w, h] if *e == experts && *h == hidden && *w == width => down.transpose_axes(&[0, 2, 1])?,
        [e, h, w] if *e == experts && *h == hidden && *w == width => down,
        shape => return Err(corrupt(l, &down_name, shape)),
    };
    let mut halves = gate_up.split_equal(2, 1)?.into_iter();
    let (gate, up) = (halves.next().expect("gate"), halves.next().expect("up"));
    SwitchGlu::new(ExpertWeights::dense(gate)?, ExpertWeights::dense(up)?, ExpertWeights::dense(down)?, l.config.activation)
}

struct Block {
    input_norm: RmsNorm,
    attention: Attention,
    post_attention_norm: RmsNorm,
    mlp: FeedForward,
}

impl Block {
    fn arrays(&self) -> Vec<&Array> {
        let mut all = self.attention.arrays();
        all.extend(self.mlp.arrays().into_iter().chain([self.input_norm.weight(), self.post_attention_norm.weight()]));
        all
    }
}

pub struct Qwen3VlText {
    config: TextConfig,
    embed: Embedding,
    blocks: Vec<Block>,
    head: OutputHead,
    rope: MultiAxisRope,
    image_token_id: u32,
}

pub fn build(config: &TextConfig, raw: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let source = w.source().to_path_buf();
    let raw = raw.ok_or_else(|| EngineError::ModelFormat {
        path: source.clone(),
        reason: format!("{} loads from a Hugging Face folder (config.json and *.safetensors)", config.arch),
    })?;
    let args = TextArgs::from_json(raw, config.head_dim).map_err(|reason| EngineError::ModelFormat { path: source.clone(), reason })?;
    w.drop_prefixed(NOT_TEXT);

    let moe: Option<MoeKeys> = match config.arch.as_str() {
        "qwen3_vl_moe_text" => {
            let text = raw.get("text_config").filter(|t| t.is_object()).unwrap_or(raw);
            let keys: MoeKeys = serde_json::from_value(text.clone())
                .map_err(|e| EngineError::ModelFormat { path: source.clone(), reason: format!("text_config: {e}") })?;
            if keys.num_experts_per_tok == 0 || keys.num_experts_per_tok > keys.num_experts {
                return Err(EngineError::ModelFormat {
                    path: source.clone(),
                    reason: format!(
                        "num_experts_per_tok ({}) must be between 1 and num_experts ({})",
                        keys.num_experts_per_tok, keys.num_experts
                    ),
                });
            }
            Some(keys)
        }
        _ => None,
    };
    let mut l = LayerLoader::new(w, config, opts, 0.0);
    let mut blocks = Vec::with_capacity(config.num_layers);
    for i in 0..config.num_layers {
        let p = format!("model.layers.{i}");
        let a = format!("{p}.self_attn");
        let attention = Attention {
            qkv: FusedLinear::new(vec![
                l.linear(&format!("{a}.q_proj"))?,
                l.linear(&format!("{a}.k_proj"))?,
                l.linear(&format!("{a}.v_proj"))?,
            ])?,
            o_proj: l.linear(&format!("{a}.o_proj"))?,
            q_norm: l.norm(&format!("{a}.q_norm.weight"))?,
            k_norm: l.norm(&format!("{a}.k_norm.weight"))?,
            heads: config.num_heads as i32,
            kv_heads: config.num_kv_heads as i32,
            head_dim: config.head_dim as i32,
            scale: (config.head_dim as f32).powf(-0.5),
        };
        blocks.push(Block {
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            attention,
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            mlp: match &moe {
                Some(keys) if keys.sparse(i) => FeedForward::Moe(Box::new(SparseMoe {
                    router: l.linear(&format!("{p}.mlp.gate"))?,
                    top_k: keys.num_experts_per_tok as i32,
                    experts: load_experts(&mut l, &p, keys)?,
                })),
                _ => FeedForward::Dense(l.mlp(&p)?),
            },
        });
    }
    let embed = Embedding { table: l.linear("model.embed_tokens")? };
    let norm = l.norm("model.norm.weight")?;
    let lm_head = if config.tie_word_embeddings {
        l.weights.take_optional("lm_head.weight");
        None
    } else {
        Some(l.linear("lm_head")?)
    };

    Ok(Box::new(Qwen3VlText {
        config: config.clone(),
        embed,
        blocks,
        head: OutputHead { norm, lm_head, softcap: None },
        rope: MultiAxisRope::new(config.head_dim, config.rope.theta, args.mrope_section),
        image_token_id: args.image_token_id,
    }))
}

impl Qwen3VlText {
    /// Each row's rotation: at the given multimodal positions [3, L] (one row), or at index
    /// plus the row's shift.
    fn rotations(&self, states: &[&mut SequenceState], positions: Option<&Array>, l: i32) -> Result<Vec<Rotation>> {
        match positions {
            Some(p) if p.shape() == [3, l] && states.len() == 1 => Ok(vec![self.rope.rotation(p)?]),
            Some(p) => Err(EngineError::Internal(format!(
                "positions of shape {:?} for {} rows of {l} tokens; multimodal RoPE needs [3, {l}] and one row",
                p.shape(),
                states.len()
            ))),
            None => {
                states.iter().map(|s| self.rope.rotation(&MultiAxisRope::text_positions(s.len() as i64 + s.position_shift(), l)?)).collect()
            }
        }
    }
}

impl Attention {
    /// x [1, L, hidden] → [1, L, hidden]; the layer's keys and values grow by L.
    fn forward(&self, x: &Array, rotation: &Rotation, state: &mut LayerState) -> Result<Array> {
        let projected = self.qkv.forward(x)?;
        let out = self.attend(projected, rotation, state)?;
        self.o_proj.forward(&out)
    }

    /// Several sequences' decode step, x [B, 1, hidden]: the projections once for the batch,
    /// the attention per row against its own keys and values and at its own position.
    fn forward_rows(&self, x: &Array, rotations: &[Rotation], states: &mut [&mut LayerState]) -> Result<Array> {
        let projected = self.qkv.forward(x)?;
        let mut rows = Vec::with_capacity(states.len());
        for (i, (state, rotation)) in states.iter_mut().zip(rotations).enumerate() {
            let row = i as i32..i as i32 + 1;
            let mine = projected.iter().map(|p| p.index((row.clone(), .., ..))).collect();
            rows.push(self.attend(mine, rotation, state)?);
        }
        let out = if rows.len() == 1 { rows.pop().expect("one row") } else { ops::concatenate(&rows, 0)? };
        self.o_proj.forward(&out)
    }

    /// q, k, v projections [b, L, ·] → the heads' output [b, L, heads × head_dim].
    fn attend(&self, projected: Vec<Array>, rotation: &Rotation, state: &mut LayerState) -> Result<Array> {
        let mut parts = projected.into_iter();
        let (q, k, v) = (parts.next().expect("q_proj"), parts.next().expect("k_proj"), parts.next().expect("v_proj"));
        let (b, l) = (q.dim(0), q.dim(1));
        let (h, kvh, d) = (self.heads, self.kv_heads, self.head_dim);
        let q = self.q_norm.forward(&q.reshape(&[b, l, h, d])?)?.transpose_axes(&[0, 2, 1, 3])?;
        let k = self.k_norm.forward(&k.reshape(&[b, l, kvh, d])?)?.transpose_axes(&[0, 2, 1, 3])?;
        let v = v.reshape(&[b, l, kvh, d])?.transpose_axes(&[0, 2, 1, 3])?;
        let (q, k) = (rotation.apply(&q)?, rotation.apply(&k)?);
        let out = attention::attend_causal(state, &q, k, v, self.scale)?;
        Ok(out.transpose_axes(&[0, 2, 1, 3])?.reshape(&[b, l, h * d])?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all = self.qkv.arrays();
        all.extend(self.o_proj.arrays());
        all.extend([self.q_norm.weight(), self.k_norm.weight()]);
        all
    }
}

impl TextModel for Qwen3VlText {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn accepts(&self) -> Accepts {
        Accepts { batches: true, media_pad_id: Some(self.image_token_id), ..Accepts::TOKENS }
    }

    /// Token ids typed as the image placeholder read as its own embedding, as in transformers
    /// (which only replaces them when pixels come with them). Each row sits at its own position
    /// (its length plus its position shift: rows after images sit where their own prompts left
    /// them); a prompt with images at the positions it gives, after which the next token goes
    /// one past the furthest. The projections and MLPs run once for the batch.
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let one = matches!(rows, Rows::One(_));
        let mut h = input.embeddings(|tokens| self.embed.forward(tokens))?;
        let (positions, additions) = match &input {
            Input::Embeddings(media) => (media.positions, media.layer_additions),
            Input::Tokens(_) => (None, None),
        };
        let states = rows.states_for(&self.config.arch, self.blocks.len(), h.dim(0))?;
        let rotations = self.rotations(states, positions, h.dim(1))?;
        let extra = additions.map(|a| a.dim(0) as usize).unwrap_or(0);
        for (i, block) in self.blocks.iter().enumerate() {
            let x = block.input_norm.forward(&h)?;
            let a = match one {
                true => block.attention.forward(&x, &rotations[0], &mut states[0].layers[i])?,
                false => {
                    let mut layers: Vec<&mut LayerState> = states.iter_mut().map(|s| &mut s.layers[i]).collect();
                    block.attention.forward_rows(&x, &rotations, &mut layers)?
                }
            };
            h = ops::add(&h, &a)?;
            let m = block.mlp.forward(&block.post_attention_norm.forward(&h)?)?;
            h = ops::add(&h, &m)?;
            if i < extra {
                let rows = additions.expect("counted above").index(i as i32);
                h = ops::add(&h, &rows.as_dtype(h.dtype())?)?;
            }
        }
        let output = self.head.finish(&self.embed, &h, compute)?;
        if let Input::Embeddings(media) = &input {
            media.continue_past_positions(states[0])?;
        }
        Ok(output)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        self.embed.forward(tokens)
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        all.extend(self.blocks.iter().flat_map(Block::arrays));
        all.extend(self.head.arrays());
        all
    }
}
