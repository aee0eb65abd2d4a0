//! DiffusionGemma's text model: the encoder is Gemma 4's text stack (every layer a dense MLP
//! beside routed experts, full layers with keys doubling as values), read causally into the
//! state; the decoder is the same stack with the same weights (tied in the checkpoint), its own
//! layer scalars and a self-conditioning block in front: the canvas's token embeddings plus
//! an MLP of the previous step's soft embeddings (the softmax of its tempered logits times the
//! embedding table), RMS-normed without a weight. The decoder attends both ways over the canvas
//! and everything the state holds (a sliding layer: the positions its window keeps), which is
//! the "cross-attention to the encoder's cache" of the paper: one attention over both.
//!
//! Placeholder ids are embedded as they are (transformers' DiffusionGemma does not read them as
//! the pad id, as Gemma 4 does). A prompt with an image runs through the encoder from
//! embeddings: the image's rows come from Gemma 4's vision tower (the family's `load_encoder`)
//! and, with `use_bidirectional_attention = "vision"`, its tokens see each other both ways in
//! every layer (`MediaMask::EveryLayer`, transformers' block mask), not only in sliding ones as
//! in Gemma 4. The canvases never hold images: the decoder reads them through the state.

use mlx_rs::{fast, ops, Array, Dtype};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::config::{LayerKind, TextConfig};
use crate::model::families::gemma4::{build_stack, Gemma4, Gemma4Args, MediaMask};
use crate::model::layer_loader::LayerLoader;
use crate::model::layers::{FusedLinear, Mlp, RmsNorm};
use crate::model::weights::Weights;
use crate::model::{Accepts, BuildOptions, Compute, Denoiser, DenoisingParams, Input, Output, Rows, TextModel};
use crate::state::{SequenceState, StateKind};

use super::config::denoising_params;

/// Where the checkpoint keeps the shared stack (transformers saves the decoder's copy of tied
/// weights; either copy is read).
const ENCODER: &str = "model.encoder.language_model.";
const DECODER: &str = "model.decoder.";
const FINAL_LOGIT_SOFTCAP: f32 = 30.0;
/// Parts of the checkpoint the towers' loader reads (`Gemma4Encoder`).
const NOT_READ: &[&str] = &["model.encoder.vision_tower.", "model.encoder.embed_vision."];

struct SelfConditioning {
    pre_norm: RmsNorm,
    mlp: Mlp,
    eps: f32,
}

pub struct DiffusionGemma {
    stack: Gemma4,
    decoder_scalars: Vec<Array>,
    self_conditioning: SelfConditioning,
    params: DenoisingParams,
}

pub fn build(config: &TextConfig, json: Option<&Value>, w: &mut Weights, opts: &BuildOptions) -> Result<Box<dyn TextModel>> {
    let folder = w.source().to_path_buf();
    let path = folder.join("config.json");
    let json =
        json.ok_or_else(|| EngineError::ModelFormat { path: path.clone(), reason: format!("{} loads from a config.json", config.arch) })?;
    let text = json.get("text_config").filter(|v| v.is_object()).unwrap_or(json);
    if text.get("use_bidirectional_attention").and_then(Value::as_str) == Some("all") {
        return Err(EngineError::ModelFormat {
            path,
            reason: "use_bidirectional_attention \"all\" (an encoder without a causal mask) is not supported; DiffusionGemma as released leaves it unset".into(),
        });
    }
    let mut config = config.clone();
    config.final_logit_softcap =
        Some(text.get("final_logit_softcapping").and_then(Value::as_f64).map_or(FINAL_LOGIT_SOFTCAP, |c| c as f32));
    let params = denoising_params(json, &folder)?;
    check_decoder_attention(&config, w)?;

    // The decoder's own layer scalars (buffers, not tied), before its copy of the stack is
    // read as the encoder's.
    let dtype = opts.dtype;
    let decoder_scalars = (0..config.num_layers)
        .map(|i| match w.take_optional(&format!("{DECODER}layers.{i}.layer_scalar")) {
            Some(s) => Ok(s.as_dtype(dtype)?),
            None => Ok(Array::from_f32(1.0).as_dtype(dtype)?),
        })
        .collect::<Result<Vec<_>>>()?;
    w.drop_prefixed(NOT_READ);
    w.rename_prefixed(ENCODER, "model.");
    w.rename_prefixed(DECODER, "model.");
    if config.tie_word_embeddings {
        w.take_optional("lm_head.weight");
    }

    // Gemma 4's arguments as DiffusionGemma fixes them: experts in every layer, no v_proj in
    // full layers; placeholders embedded as they are.
    let mut gemma4_json = json.clone();
    let text = match gemma4_json.get_mut("text_config").filter(|v| v.is_object()) {
        Some(t) => t,
        None => &mut gemma4_json,
    };
    text["enable_moe_block"] = Value::Bool(true);
    text["attention_k_eq_v"] = Value::Bool(true);
    let mut extras = Gemma4Args::from_json(&gemma4_json, &config, &path)?;
    (extras.image_token_id, extras.audio_token_id, extras.video_token_id) = (None, None, None);
    extras.media_mask = MediaMask::EveryLayer;
    // transformers' DiffusionGemma soft-caps at 30 always (a class constant config.json does not
    // carry), unless the file says otherwise.
    let stack = build_stack(&config, extras, w, opts)?;

    let mut l = LayerLoader::new(w, &config, opts, 0.0);
    let p = "model.self_conditioning";
    let self_conditioning = SelfConditioning {
        pre_norm: l.norm(&format!("{p}.pre_norm.weight"))?,
        mlp: Mlp {
            gate_up: FusedLinear::new(vec![l.linear(&format!("{p}.gate_proj"))?, l.linear(&format!("{p}.up_proj"))?])?,
            down: l.linear(&format!("{p}.down_proj"))?,
            activation: config.activation,
        },
        eps: config.rms_norm_eps,
    };
    Ok(Box::new(DiffusionGemma { stack, decoder_scalars, self_conditioning, params }))
}

/// The decoder attends to the encoder's keys and values through the shared attention weights:
/// a checkpoint without them (in either copy) cannot denoise, and says which are missing.
fn check_decoder_attention(config: &TextConfig, w: &Weights) -> Result<()> {
    for (i, kind) in config.layer_kinds.iter().enumerate() {
        let projections: &[&str] = match kind {
            LayerKind::Sliding => &["q_proj", "k_proj", "v_proj", "o_proj"],
            _ => &["q_proj", "k_proj", "o_proj"],
        };
        for proj in projections {
            let name = format!("layers.{i}.self_attn.{proj}.weight");
            if !w.contains(&format!("{DECODER}{name}")) && !w.contains(&format!("{ENCODER}{name}")) {
                return Err(EngineError::CorruptWeights {
                    path: w.source().into(),
                    reason: format!(
                        "the decoder's cross-attention to the encoder's cache needs `{DECODER}{name}` (or the encoder's tied copy), which is missing"
                    ),
                });
            }
        }
    }
    Ok(())
}

impl TextModel for DiffusionGemma {
    fn config(&self) -> &TextConfig {
        self.stack.config()
    }

    /// Images only (no audio, no video); no batches, no logits of every position: the
    /// runtime's denoising method asks neither.
    fn accepts(&self) -> Accepts {
        Accepts { media_pad_id: self.stack.accepts().media_pad_id, ..Accepts::TOKENS }
    }

    /// The encoder: the tokens (or a prompt with an image's rows spliced in) join the state;
    /// the logits through the tied head.
    fn forward(&self, input: Input, rows: Rows, compute: Compute) -> Result<Output> {
        self.stack.forward(input, rows, compute)
    }

    fn embed(&self, tokens: &Array) -> Result<Array> {
        self.stack.embed(tokens)
    }

    fn arrays(&self) -> Vec<&Array> {
        let s = &self.self_conditioning;
        let mut all = self.stack.arrays();
        all.extend(self.decoder_scalars.iter());
        all.push(s.pre_norm.weight());
        all.extend(s.mlp.arrays());
        all
    }

    fn state_kinds(&self) -> Vec<StateKind> {
        self.stack.state_kinds()
    }

    fn denoiser(&self) -> Option<&dyn Denoiser> {
        Some(self)
    }
}

impl Denoiser for DiffusionGemma {
    fn params(&self) -> &DenoisingParams {
        &self.params
    }

    fn denoise(&self, canvas: &[u32], self_conditioning: Option<&Array>, state: &SequenceState) -> Result<Array> {
        if canvas.len() != self.params.canvas_length {
            return Err(EngineError::Internal(format!("a canvas of {} tokens for a model of {}", canvas.len(), self.params.canvas_length)));
        }
        let ids: Vec<i32> = canvas.iter().map(|&t| t as i32).collect();
        let embeds = self.stack.embed(&Array::from_slice(&ids, &[1, ids.len() as i32]))?;
        let s = &self.self_conditioning;
        // The first step has no previous prediction: its soft embeddings are zero, and so is
        // the MLP's output.
        let combined = match self_conditioning {
            Some(logits) => {
                let probs = ops::softmax_axis(&logits.as_dtype(Dtype::Float32)?, -1, true)?;
                let soft = self.stack.soft_embeddings(&probs)?.reshape(embeds.shape())?;
                ops::add(&embeds, &s.mlp.forward(&s.pre_norm.forward(&soft)?)?)?
            }
            None => embeds,
        };
        let x = fast::rms_norm(&combined, None, s.eps)?;
        self.stack.canvas_logits(x, state, &self.decoder_scalars)
    }
}
