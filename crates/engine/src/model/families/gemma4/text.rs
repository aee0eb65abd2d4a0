//! Gemma 4 (text): Gemma 3's block (four norms, GELU-tanh MLP, √hidden-scaled embeddings,
//! final-logit soft-capping) with
//! - norms that multiply by `weight` itself (not 1 + weight), a weightless v_norm, attention
//!   scale 1 (the q/k norms do the scaling);
//! - full-attention layers with their own head size and KV heads, proportional partial RoPE and,
//!   with `attention_k_eq_v`, keys doubling as values;
//! - KV sharing: the last `num_kv_shared_layers` layers read the keys and values of the last
//!   earlier layer of their kind instead of computing (and caching) their own;
//! - per-layer inputs (PLE): a second embedding table, looked up by token id, plus a projection
//!   of the input embeddings, feed a small gated residual at every layer;
//! - optionally a routed MoE beside the dense MLP;
//! - a per-layer output scalar.
//!
//! Every id that is a media placeholder (image, audio or video) is read as the pad id, in every
//! forward pass (text-only prompts and decode steps too), for both embedding tables, as
//! transformers does; so a placeholder typed as text, or generated, looks up the pad rows.
//! Multimodal prompts run from embeddings (`Input::Embeddings`): media rows come from the
//! towers, and with
//! `use_bidirectional_attention = "vision"` the tokens of one image see each other both ways in
//! sliding layers (full layers stay causal; `MediaMask` says how families built on the stack
//! differ).

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{fast, nn, ops, Array, Dtype};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::{LayerKind, TextConfig};
use crate::model::layer_loader::{AttentionShape, AttentionSpec, KvWeights, LayerLoader};
use crate::model::layers::attention::Attended;
use crate::model::layers::mask::sliding_causal_mask;
use crate::model::layers::moe::top_k;
use crate::model::layers::{Attention, Embedding, Experts, KvSource, Linear, Mlp, OutputHead, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Input, Output, Rows, TextModel};
use crate::state::{SequenceState, StateKind};

use super::config::{Gemma4Args, MediaMask, MoeConfig};

/// The routed experts beside a layer's dense MLP, and their norms.
struct Moe {
    /// Router input scale: `router.scale × hidden^-0.5`, applied after a weightless RMS norm.
    router_scale: Array,
    router: Linear,
    per_expert_scale: Array,
    top_k: i32,
    experts: Experts,
    pre_norm: RmsNorm,
    post_norm_dense: RmsNorm,
    post_norm_experts: RmsNorm,
}

/// One layer's share of the per-layer inputs.
struct PerLayerGate {
    gate: Linear,
    projection: Linear,
    norm: RmsNorm,
}

struct Block {
    kind: LayerKind,
    input_norm: RmsNorm,
    attention: Attention,
    /// The earlier layer whose keys and values this one attends to (KV sharing).
    kv_from: Option<usize>,
    post_attention_norm: RmsNorm,
    pre_feedforward_norm: RmsNorm,
    mlp: Mlp,
    moe: Option<Moe>,
    post_feedforward_norm: RmsNorm,
    per_layer: Option<PerLayerGate>,
    layer_scalar: Array,
}

/// The per-layer input embeddings (PLE) and the projection that mixes in the input embeddings.
struct PerLayerInputs {
    table: Embedding,
    table_scale: Array,
    projection: Linear,
    projection_scale: Array,
    norm: RmsNorm,
    width: i32,
}

pub struct Gemma4 {
    config: TextConfig,
    extras: Gemma4Args,
    embed: Embedding,
    embed_scale: Array,
    per_layer_inputs: Option<PerLayerInputs>,
    blocks: Vec<Block>,
    head: OutputHead,
    /// Layers whose keys and values a later layer reads.
    producers: Vec<bool>,
}

/// Tensors of the media towers and their embedders, as the text model's loader names them.
const TOWERS: &[&str] = &[
    "vision_tower.",
    "audio_tower.",
    "embed_vision.",
    "embed_audio.",
    "model.vision_tower.",
    "model.audio_tower.",
    "model.embed_vision.",
    "model.embed_audio.",
];

pub fn build(config: &TextConfig, json: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let path = w.source().join("config.json");
    let json =
        json.ok_or_else(|| EngineError::ModelFormat { path: path.clone(), reason: format!("{} loads from a config.json", config.arch) })?;
    let extras = Gemma4Args::from_json(json, config, &path)?;
    Ok(Box::new(build_stack(config, extras, w, opts)?))
}

/// The text stack from the shared config, the Gemma 4 arguments and the weights (named as
/// Gemma 4's text model names them), for families built on it.
pub fn build_stack(config: &TextConfig, extras: Gemma4Args, w: &mut Weights, opts: &BuildOptions) -> Result<Gemma4> {
    let kv_from = kv_sources(&config.layer_kinds, extras.num_kv_shared_layers)
        .map_err(|reason| EngineError::CorruptWeights { path: "config.json".into(), reason })?;
    // The vision and audio towers load on their own (`encoder.rs`), from the same files.
    w.drop_prefixed(TOWERS);
    let mut l = LayerLoader::new(w, config, opts, 0.0);
    let dtype = l.dtype;
    let scalar = |v: f32| Array::from_f32(v).as_dtype(dtype);
    let mut blocks = Vec::with_capacity(config.num_layers);
    for (i, &kind) in config.layer_kinds.iter().enumerate() {
        let p = format!("model.layers.{i}");
        let sliding = kind == LayerKind::Sliding;
        let spec = AttentionSpec {
            rope: Some(config.rope_local.as_ref().filter(|_| sliding).unwrap_or(&config.rope)),
            scale: 1.0,
            window: if sliding { config.sliding_window } else { None },
        };
        let kv = match kv_from[i] {
            Some(_) => KvWeights::Shared,
            None if extras.attention_k_eq_v && !sliding => KvWeights::KeysAsValues,
            None => KvWeights::Own,
        };
        let shape = AttentionShape { head_dim: extras.head_dims[i], kv_heads: extras.kv_heads[i], kv, v_norm: true };
        let per_layer = if extras.hidden_size_per_layer_input > 0 {
            Some(PerLayerGate {
                gate: l.linear(&format!("{p}.per_layer_input_gate"))?,
                projection: l.linear(&format!("{p}.per_layer_projection"))?,
                norm: l.norm(&format!("{p}.post_per_layer_input_norm.weight"))?,
            })
        } else {
            None
        };
        blocks.push(Block {
            kind,
            input_norm: l.norm(&format!("{p}.input_layernorm.weight"))?,
            attention: l.attention_shaped(&p, spec, shape)?,
            kv_from: kv_from[i],
            post_attention_norm: l.norm(&format!("{p}.post_attention_layernorm.weight"))?,
            pre_feedforward_norm: l.norm(&format!("{p}.pre_feedforward_layernorm.weight"))?,
            mlp: l.mlp(&p)?,
            moe: extras.moe.as_ref().map(|m| load_moe(&mut l, &p, m)).transpose()?,
            post_feedforward_norm: l.norm(&format!("{p}.post_feedforward_layernorm.weight"))?,
            per_layer,
            layer_scalar: match l.weights.take_optional(&format!("{p}.layer_scalar")) {
                Some(s) => s.as_dtype(dtype)?,
                None => scalar(1.0)?,
            },
        });
    }
    let per_layer_inputs = if extras.hidden_size_per_layer_input > 0 {
        let width = extras.hidden_size_per_layer_input;
        Some(PerLayerInputs {
            table: Embedding { table: l.linear("model.embed_tokens_per_layer")? },
            table_scale: scalar((width as f32).sqrt())?,
            projection: l.linear("model.per_layer_model_projection")?,
            projection_scale: scalar((config.hidden_size as f32).powf(-0.5))?,
            norm: l.norm("model.per_layer_projection_norm.weight")?,
            width: width as i32,
        })
    } else {
        None
    };
    let lm_head = if l.weights.contains("lm_head.weight") && !config.tie_word_embeddings { Some(l.linear("lm_head")?) } else { None };
    let mut producers = vec![false; config.num_layers];
    kv_from.iter().flatten().for_each(|&j| producers[j] = true);
    Ok(Gemma4 {
        embed: Embedding { table: l.linear("model.embed_tokens")? },
        // transformers rounds √hidden to the embedding dtype before multiplying.
        embed_scale: scalar((config.hidden_size as f32).sqrt())?,
        per_layer_inputs,
        head: OutputHead { norm: l.norm("model.norm.weight")?, lm_head, softcap: config.final_logit_softcap },
        blocks,
        producers,
        extras,
        config: config.clone(),
    })
}

/// For each layer, the layer it borrows keys and values from: the last `shared` layers each
/// take the last earlier non-shared layer of their own kind.
fn kv_sources(kinds: &[LayerKind], shared: usize) -> std::result::Result<Vec<Option<usize>>, String> {
    let first_shared = kinds.len() - shared;
    (0..kinds.len())
        .map(|i| {
            if i < first_shared {
                return Ok(None);
            }
            (0..first_shared)
                .rev()
                .find(|&j| kinds[j] == kinds[i])
                .map(Some)
                .ok_or_else(|| format!("layer {i} shares keys and values but no earlier layer of its kind computes them"))
        })
        .collect()
}

fn load_moe(l: &mut LayerLoader, p: &str, m: &MoeConfig) -> Result<Moe> {
    let hidden = l.config.hidden_size as f32;
    let scale = l.weights.take(&format!("{p}.router.scale"))?.as_dtype(Dtype::Float32)?;
    Ok(Moe {
        router_scale: ops::multiply(&scale, Array::from_f32(hidden.powf(-0.5)))?.as_dtype(l.dtype)?,
        router: l.linear(&format!("{p}.router.proj"))?,
        per_expert_scale: l.weights.take(&format!("{p}.router.per_expert_scale"))?.as_dtype(Dtype::Float32)?,
        top_k: m.top_k as i32,
        experts: load_experts(l, p)?,
        pre_norm: l.norm(&format!("{p}.pre_feedforward_layernorm_2.weight"))?,
        post_norm_dense: l.norm(&format!("{p}.post_feedforward_layernorm_1.weight"))?,
        post_norm_experts: l.norm(&format!("{p}.post_feedforward_layernorm_2.weight"))?,
    })
}

/// transformers' stacked `experts.gate_up_proj` / `experts.down_proj`, or mlx-lm's
/// `experts.switch_glu.{gate,up,down}_proj` (possibly quantized per expert). Quantized experts
/// are dequantized here: the shared `Experts` layer runs dense `gather_mm` only.
fn load_experts(l: &mut LayerLoader, p: &str) -> Result<Experts> {
    let activation = l.config.activation;
    if l.weights.contains(&format!("{p}.experts.gate_up_proj")) {
        let gate_up = l.weights.take(&format!("{p}.experts.gate_up_proj"))?.as_dtype(l.dtype)?;
        let down = l.weights.take(&format!("{p}.experts.down_proj"))?.as_dtype(l.dtype)?;
        return Experts::from_hf(gate_up, down, activation);
    }
    let mut dense = |name: &str| -> Result<Array> {
        let prefix = format!("{p}.experts.switch_glu.{name}");
        match l.weights.linear(&prefix)?.into_dtype(l.dtype, true)? {
            Linear::Dense { weight, bias: None } => Ok(weight),
            _ => Err(EngineError::CorruptWeights {
                path: l.weights.source().into(),
                reason: format!("`{prefix}` has a bias; Gemma 4's experts have none"),
            }),
        }
    };
    Experts::from_switch_glu(dense("gate_proj")?, dense("up_proj")?, dense("down_proj")?, activation)
}

impl Moe {
    /// `dense` is the dense MLP's output, `x` the block input it was computed from ([B, L, hidden]).
    fn forward(&self, dense: &Array, x: &Array, eps: f32) -> Result<Array> {
        let shape = x.shape().to_vec();
        let flat = x.reshape(&[-1, shape[2]])?;
        let routed = ops::multiply(&fast::rms_norm(&flat, None, eps)?, &self.router_scale)?;
        let probs = ops::softmax_axis(&self.router.forward(&routed)?.as_dtype(Dtype::Float32)?, -1, true)?;
        let (experts, weights) = top_k(&probs, self.top_k)?;
        let weights = ops::divide(&weights, &weights.sum_axis(-1, true)?)?;
        let weights = ops::multiply(&weights, &self.per_expert_scale.take_axis(&experts, 0)?)?.as_dtype(x.dtype())?;
        let y = self.experts.forward(&self.pre_norm.forward(&flat)?, &experts, &weights)?.reshape(&shape)?;
        Ok(ops::add(&self.post_norm_dense.forward(dense)?, &self.post_norm_experts.forward(&y)?)?)
    }

    fn arrays(&self) -> Vec<&Array> {
        let norms = [&self.pre_norm, &self.post_norm_dense, &self.post_norm_experts].map(RmsNorm::weight);
        let mut all = vec![&self.router_scale, &self.per_expert_scale];
        all.extend(self.router.arrays());
        all.extend(self.experts.arrays());
        all.extend(norms);
        all
    }
}

impl PerLayerInputs {
    /// ids [B, L], embeds [B, L, hidden] → [B, L, layers, width].
    fn compute(&self, ids: &Array, embeds: &Array, layers: i32) -> Result<Array> {
        let (b, l) = (embeds.dim(0), embeds.dim(1));
        let by_token = ops::multiply(&self.table.forward(ids)?, &self.table_scale)?.reshape(&[b, l, layers, self.width])?;
        let projected = ops::multiply(&self.projection.forward(embeds)?, &self.projection_scale)?;
        let projected = self.norm.forward(&projected.reshape(&[b, l, layers, self.width])?)?;
        Ok(ops::multiply(&ops::add(&projected, &by_token)?, Array::from_f32(std::f32::consts::FRAC_1_SQRT_2).as_dtype(embeds.dtype())?)?)
    }
}

impl Gemma4 {
    /// `tokens` with every media placeholder id replaced by the pad id.
    fn placeholders_as_pad(&self, tokens: &Array) -> Result<Array> {
        let e = &self.extras;
        let placeholders = [e.image_token_id, e.audio_token_id, e.video_token_id];
        let mut ids = tokens.clone();
        let pad = Array::from_int(e.pad_token_id as i32).as_dtype(tokens.dtype())?;
        for id in placeholders.into_iter().flatten() {
            let is_placeholder = ops::eq(tokens, Array::from_int(id as i32).as_dtype(tokens.dtype())?)?;
            ids = ops::select(&is_placeholder, &pad, &ids)?;
        }
        Ok(ids)
    }

    /// Input embeddings of ids already read through `placeholders_as_pad`.
    fn embed_ids(&self, ids: &Array) -> Result<Array> {
        Ok(ops::multiply(&self.embed.forward(ids)?, &self.embed_scale)?)
    }

    /// Embeddings [B, L, hidden] (and their ids) through the stack, row i continuing
    /// `states[i]` at its own position → the hidden states before the final norm. `blocks`
    /// labels a single sequence's media positions. Everything but attention runs once for the
    /// batch; attention per row, a KV-shared layer reading the keys and values its source layer
    /// attended to for that same row.
    fn run(&self, embeds: Array, ids: &Array, states: &mut [&mut SequenceState], blocks: Option<&[i32]>) -> Result<Array> {
        let rows = states.len();
        if embeds.dim(0) as usize != rows || (blocks.is_some() && rows != 1) {
            return Err(EngineError::Internal(format!("{} rows of embeddings for {rows} sequences", embeds.dim(0))));
        }
        let layers = self.blocks.len() as i32;
        let per_layer = self.per_layer_inputs.as_ref().map(|p| p.compute(ids, &embeds, layers)).transpose()?;
        let offsets: Vec<usize> = states.iter().map(|s| s.len()).collect();
        let l = embeds.dim(1) as usize;
        // An image in this chunk: its tokens see each other both ways, in the layers the
        // family's rule names.
        let rule = self.extras.media_mask;
        let image_blocks = blocks.filter(|b| self.extras.bidirectional_attention.as_deref() == Some("vision") && b.iter().any(|&x| x >= 0));
        let sliding_mask = image_blocks
            .zip(self.config.sliding_window)
            .map(|(b, window)| move |offset: usize, start: usize| media_mask(offset, l, Some(window), b, start, rule));
        let full_mask = image_blocks
            .filter(|_| rule == MediaMask::EveryLayer)
            .map(|b| move |offset: usize, start: usize| media_mask(offset, l, None, b, start, rule));
        // Per layer that others read, what each row attended to.
        let mut shared: Vec<Option<Vec<Attended>>> = (0..self.blocks.len()).map(|_| None).collect();
        // The state holds only the layers that compute their own keys and values.
        let mut slots: Vec<_> = states.iter_mut().map(|s| s.layers.iter_mut()).collect();
        let mut h = embeds;
        for (i, b) in self.blocks.iter().enumerate() {
            let source = b.kv_from.and_then(|j| shared[j].as_ref());
            let kvs = slots
                .iter_mut()
                .enumerate()
                .map(|(row, slot)| match source {
                    Some(a) => {
                        Ok(KvSource::Shared { keys: &a[row].keys, values: &a[row].values, offset: offsets[row], start: a[row].start })
                    }
                    None => Ok(KvSource::Own(
                        slot.next().ok_or_else(|| EngineError::Internal("the state has fewer layers than the model".into()))?,
                    )),
                })
                .collect::<Result<Vec<_>>>()?;
            let mask = match b.kind {
                LayerKind::Sliding => sliding_mask.as_ref().map(|m| m as &dyn Fn(usize, usize) -> Result<Array>),
                _ => full_mask.as_ref().map(|m| m as &dyn Fn(usize, usize) -> Result<Array>),
            };
            let (a, attended) = b.attention.forward_rows_with(&b.input_norm.forward(&h)?, kvs, mask)?;
            if self.producers[i] {
                shared[i] = Some(attended);
            }
            let inputs = per_layer.as_ref().map(|p| p.index((.., .., i as i32, ..)));
            h = b.after_attention(h, &a, inputs.as_ref(), &b.layer_scalar, self.config.rms_norm_eps)?;
        }
        Ok(h)
    }

    /// The stack over a canvas that attends both ways, to itself and to every position `state`
    /// holds (a sliding layer to what its window holds), leaving `state` as it was:
    /// DiffusionGemma's decoder, which shares this stack's weights. `embeds` [1, C, hidden];
    /// `scalars`: each layer's output scalar (the decoder keeps its own). → float32 logits
    /// [C, vocab] of every position, soft-capped. Stacks with KV sharing or per-layer inputs
    /// are refused (DiffusionGemma has neither).
    pub fn canvas_logits(&self, embeds: Array, state: &SequenceState, scalars: &[Array]) -> Result<Array> {
        if self.per_layer_inputs.is_some() || self.blocks.iter().any(|b| b.kv_from.is_some()) || scalars.len() != self.blocks.len() {
            return Err(EngineError::Internal("a canvas pass needs a stack without KV sharing or per-layer inputs".into()));
        }
        let c = embeds.dim(1);
        // Keys and values appended for the canvas go to a copy (arrays are shared, not copied).
        let mut held = state.clone();
        let everything = move |offset: usize, start: usize| -> Result<Array> { Ok(ops::ones::<bool>(&[c, (offset - start) as i32 + c])?) };
        let mut h = embeds;
        for ((b, slot), scalar) in self.blocks.iter().zip(held.layers.iter_mut()).zip(scalars) {
            let (a, _) = b.attention.forward_with(&b.input_norm.forward(&h)?, KvSource::Own(slot), Some(&everything))?;
            h = b.after_attention(h, &a, None, scalar, self.config.rms_norm_eps)?;
        }
        let logits = self.head.logits(&self.embed, &self.head.norm.forward(&h)?)?;
        Ok(logits.reshape(&[c, -1])?)
    }

    /// Input embeddings of probabilities over the vocabulary: `probs` [.., vocab] (float32)
    /// times the embedding table, scaled as token embeddings are (DiffusionGemma's
    /// self-conditioning). Dense tables only.
    pub fn soft_embeddings(&self, probs: &Array) -> Result<Array> {
        match &self.embed.table {
            Linear::Dense { weight, .. } => {
                let soft = ops::matmul(&probs.as_dtype(weight.dtype())?, weight)?;
                Ok(ops::multiply(&soft, &self.embed_scale)?)
            }
            Linear::Quantized { .. } => Err(EngineError::invalid(
                "model",
                "self-conditioning reads the embedding table dense; load the model unquantized (a float checkpoint)",
            )),
        }
    }

    /// The per-layer output scalars.
    pub fn layer_scalars(&self) -> Vec<Array> {
        self.blocks.iter().map(|b| b.layer_scalar.clone()).collect()
    }
}

impl Block {
    /// The block after attention: its residual, the dense MLP (and experts), the per-layer
    /// input gate where the model has one (`inputs`: this layer's share), the output scalar.
    fn after_attention(&self, h: Array, attended: &Array, inputs: Option<&Array>, scalar: &Array, eps: f32) -> Result<Array> {
        let h = ops::add(&h, &self.post_attention_norm.forward(attended)?)?;
        let dense = self.mlp.forward(&self.pre_feedforward_norm.forward(&h)?)?;
        let m = match &self.moe {
            Some(moe) => moe.forward(&dense, &h, eps)?,
            None => dense,
        };
        let mut h = ops::add(&h, &self.post_feedforward_norm.forward(&m)?)?;
        if let (Some(g), Some(inputs)) = (&self.per_layer, inputs) {
            let x = ops::multiply(&nn::gelu_approximate(&g.gate.forward(&h)?)?, inputs)?;
            h = ops::add(&h, &g.norm.forward(&g.projection.forward(&x)?)?)?;
        }
        Ok(ops::multiply(&h, scalar)?)
    }
}

/// A layer's mask with media over [L, offset + L - start] (keys from position `start`);
/// `blocks` labels this chunk's positions (-1 for text), earlier chunks are all in the past.
/// The layer's own causal mask (`window`: a sliding layer's) opened within each image: under
/// `SlidingLayers` still within the window, AND(window, OR(causal, image)); under `EveryLayer`
/// OR(causal within the window, image).
fn media_mask(offset: usize, l: usize, window: Option<usize>, blocks: &[i32], start: usize, rule: MediaMask) -> Result<Array> {
    if blocks.len() != l {
        return Err(EngineError::invalid("media_blocks", format!("{} labels for {l} positions", blocks.len())));
    }
    // A full layer's causal mask is a window wider than the sequence.
    let window = window.unwrap_or(offset + l + 1);
    let base = sliding_causal_mask(offset, l, window, start)?;
    let keys: Vec<i32> = std::iter::repeat_n(-1, offset - start).chain(blocks.iter().copied()).collect();
    let q = Array::from_slice(blocks, &[l as i32, 1]);
    let k = Array::from_slice(&keys, &[1, (offset + l - start) as i32]);
    let same = ops::logical_and(&ops::eq(&q, &k)?, &ops::ge(&q, Array::from_int(0))?)?;
    let image = match rule {
        MediaMask::EveryLayer => same,
        MediaMask::SlidingLayers => {
            let qpos = ops::add(Array::from_iter(0..l as i32, &[l as i32, 1]), Array::from_int(offset as i32))?;
            let kpos = Array::from_iter(start as i32..(offset + l) as i32, &[1, (offset + l - start) as i32]);
            let in_window = ops::gt(&kpos, &ops::subtract(&qpos, Array::from_int(window as i32))?)?;
            ops::logical_and(&same, &in_window)?
        }
    };
    Ok(ops::logical_or(&base, &image)?)
}

impl TextModel for Gemma4 {
    fn config(&self) -> &TextConfig {
        &self.config
    }

    fn accepts(&self) -> Accepts {
        Accepts { media_pad_id: Some(self.extras.pad_token_id), ..Accepts::BATCHES_EVERY_POSITION }
    }

    /// Placeholder ids read as the pad id, from token ids or beside input embeddings.
    fn forward(&self, input: Input, mut rows: Rows, compute: Compute) -> Result<Output> {
        let (embeds, ids, media_blocks) = match &input {
            Input::Tokens(tokens) => {
                let ids = self.placeholders_as_pad(tokens)?;
                (self.embed_ids(&ids)?, ids, None)
            }
            Input::Embeddings(media) => (media.embeds.clone(), self.placeholders_as_pad(media.ids)?, media.media_blocks),
        };
        let h = self.run(embeds, &ids, rows.states(&self.config.arch)?, media_blocks)?;
        self.head.finish(&self.embed, &h, compute)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        self.embed_ids(&self.placeholders_as_pad(tokens)?)
    }

    /// KV-shared layers keep nothing of their own; sliding layers keep only their window.
    fn state_kinds(&self) -> Vec<StateKind> {
        self.blocks.iter().filter(|b| b.kv_from.is_none()).map(|b| b.attention.state_kind()).collect()
    }

    fn arrays(&self) -> Vec<&Array> {
        let mut all: Vec<&Array> = self.embed.table.arrays();
        for b in &self.blocks {
            all.extend(b.attention.arrays().into_iter().chain(b.mlp.arrays()));
            let norms = [&b.input_norm, &b.post_attention_norm, &b.pre_feedforward_norm, &b.post_feedforward_norm];
            all.extend(norms.into_iter().map(RmsNorm::weight));
            all.extend(b.moe.iter().flat_map(Moe::arrays));
            if let Some(g) = &b.per_layer {
                all.extend(g.gate.arrays().into_iter().chain(g.projection.arrays()));
                all.push(g.norm.weight());
            }
            all.push(&b.layer_scalar);
        }
        if let Some(p) = &self.per_layer_inputs {
            all.extend(p.table.table.arrays().into_iter().chain(p.projection.arrays()));
            all.extend([p.norm.weight(), &p.table_scale, &p.projection_scale]);
        }
        all.push(&self.embed_scale);
        all.extend(self.head.arrays());
        all
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use LayerKind::{Full, Sliding};

    #[test]
    fn shared_layers_read_the_last_earlier_layer_of_their_kind() {
        let kinds = [Sliding, Full, Sliding, Sliding, Full];
        assert_eq!(kv_sources(&kinds, 2).unwrap(), [None, None, None, Some(2), Some(1)]);
        assert_eq!(kv_sources(&kinds, 0).unwrap(), [None; 5]);
        assert!(kv_sources(&[Sliding, Full], 1).is_err());
    }
}
