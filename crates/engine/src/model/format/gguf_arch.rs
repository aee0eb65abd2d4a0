//! GGUF architectures whose families read their own config.json keys (Gemma 3, Gemma 4, Qwen3.5,
//! Qwen3.5 MoE, Qwen3-Next, Mistral 3, gpt-oss): the metadata is turned into the config.json their Hugging Face checkpoints
//! carry, read by the same parser, and what llama.cpp's converter changed in the tensors is undone
//! so the family loads them as it loads a Hugging Face or mlx-lm folder.
//!
//! What the converter (convert_hf_to_gguf.py) does, per `general.architecture`:
//! - `gemma3`: every norm stored as `1 + w` (taken back to `w`: the family adds the 1); the
//!   global layers' RoPE θ only (llama.cpp fixes the local one at 10⁴, every 6th layer global and
//!   the query scale at head_dim^-½, except the 62-layer 27B's (hidden / heads)^-½: a file that says
//!   otherwise in `attention.sliding_window_pattern` or `attention.scale` is read as it says).
//! - `qwen35`, `qwen35moe`, `qwen3next`: `A_log` as `ssm_a = -exp(A_log)`; the convolution squeezed
//!   to [C, K] (given back as mlx-lm's [C, K, 1], whose norms are stored as `1 + w` as llama.cpp
//!   stores them); with fewer key heads than value heads, the value heads reordered from grouped
//!   by key head to tiled (ggml broadcasts that way), in the rows of the qkv projection's V part,
//!   `in_proj_z`, `in_proj_a`/`_b`, `A_log`, `dt_bias` and the convolution's V channels, and the
//!   columns of `out_proj` (`qwen35`, `qwen35moe`: put back here); Qwen3-Next's `in_proj_qkvz`
//!   (q, k, v, z per key head) split into `attn_qkv` (all q, all k, all v) and `attn_gate` (all
//!   z) (`qwen3next`: fused back); routed experts stacked [E, out, in] (read as mlx-lm's
//!   `switch_mlp`). Quantized rows move packed; quantized columns move packed when a head's
//!   columns fill whole blocks of 32, else that one matrix is widened to float32 first.
//! - `mistral3` (Ministral 3, Mistral Small 3.x: the text model only, its vision tower going to a
//!   separate mmproj file): llama's tensors, Q and K rows permuted per head for ggml's interleaved
//!   RoPE (put back here: each head's even rows, then its odd ones); YaRN in the `rope.scaling.*`
//!   keys, `mscale_all_dim` as `yarn_log_multiplier` (read as both mscales: the converter keeps one)
//!   and `llama_4_scaling_beta` as `attention.temperature_scale`.
//! - `gemma4` (text; dense): norms as they are (not `1 + w`); the full layers' head size in
//!   `key_length`, the sliding ones' in `key_length_swa`, KV heads and MLP widths per layer; K = V
//!   on full layers shown by their missing `attn_v`; the full layers' proportional RoPE as a
//!   `rope_freqs` tensor (1 for each rotated pair, 1e30 for the rest), read into
//!   `partial_rotary_factor` and dropped; `layer_scalar` as `layer_output_scale.weight`.
//! - `gpt-oss`: transformers' `gate_up_proj` [E, H, 2I] (gate and up interleaved) split and
//!   transposed into `ffn_gate_exps` and `ffn_up_exps` [E, I, H], `down_proj` into
//!   `ffn_down_exps` [E, H, I], biases split alike (all put back here, interleaved, as the family
//!   reads a Hugging Face folder: MXFP4 experts as OpenAI's `*_blocks`/`*_scales`, bytes unchanged);
//!   sinks as `attn_sinks.weight`; the alternating layers (sliding first), the SwiGLU's α and limit
//!   and YaRN's `truncate: false` fixed by llama.cpp, as they are the family's defaults.

use std::collections::HashMap;
use std::path::Path;

use mlx_rs::{ops, Array, Dtype};
use serde_json::{json, Map, Value};

use super::gguf_meta::{Meta, Names};
use crate::error::{EngineError, Result};

/// One architecture: its tensor names, its config.json from the metadata and the undoing of the
/// converter's tensor changes.
pub(super) struct Converted {
    pub names: &'static Names,
    pub config: fn(&Meta, &str) -> Result<Value>,
    pub restore: fn(&mut HashMap<String, Array>, &Value, &Path) -> Result<()>,
}

/// `general.architecture` → (model_type, how to read it).
pub(super) const CONVERTED: &[(&str, &str, Converted)] = &[
    ("gemma3", "gemma3_text", Converted { names: &GEMMA3, config: gemma3_config, restore: gemma3_restore }),
    ("qwen35", "qwen3_5_text", Converted { names: &QWEN35, config: qwen35_config, restore: qwen35_restore }),
    ("qwen35moe", "qwen3_5_moe_text", Converted { names: &QWEN35, config: qwen35_config, restore: qwen35_restore }),
    ("qwen3next", "qwen3_next", Converted { names: &QWEN35, config: qwen35_config, restore: qwen35_restore }),
    ("mistral3", "ministral3", Converted { names: &super::gguf_meta::LLAMA, config: mistral3_config, restore: mistral3_restore }),
    ("gpt-oss", "gpt_oss", Converted { names: &GPT_OSS, config: gpt_oss_config, restore: gpt_oss_restore }),
    ("gemma4", "gemma4_text", Converted { names: &GEMMA4, config: gemma4_config, restore: gemma4_restore }),
];

pub(super) fn converted(arch: &str) -> Option<(&'static str, &'static Converted)> {
    CONVERTED.iter().find(|(a, _, _)| *a == arch).map(|(_, model_type, c)| (*model_type, c))
}

const GEMMA3: Names = Names {
    top: &[("token_embd", "model.embed_tokens"), ("output_norm", "model.norm"), ("output", "lm_head")],
    block: &[
        ("attn_norm", "input_layernorm"),
        ("post_attention_norm", "post_attention_layernorm"),
        ("ffn_norm", "pre_feedforward_layernorm"),
        ("post_ffw_norm", "post_feedforward_layernorm"),
        ("attn_q_norm", "self_attn.q_norm"),
        ("attn_k_norm", "self_attn.k_norm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj"),
        ("ffn_gate", "mlp.gate_proj"),
        ("ffn_up", "mlp.up_proj"),
        ("ffn_down", "mlp.down_proj"),
    ],
};

/// Qwen3.5's, Qwen3.5-MoE's and Qwen3-Next's (the routed experts as mlx-lm stacks them).
const QWEN35: Names = Names {
    top: &[("token_embd", "model.embed_tokens"), ("output_norm", "model.norm"), ("output", "lm_head")],
    block: &[
        ("attn_norm", "input_layernorm"),
        ("post_attention_norm", "post_attention_layernorm"),
        ("attn_q_norm", "self_attn.q_norm"),
        ("attn_k_norm", "self_attn.k_norm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj"),
        ("attn_qkv", "linear_attn.in_proj_qkv"),
        ("attn_gate", "linear_attn.in_proj_z"),
        ("ssm_alpha", "linear_attn.in_proj_a"),
        ("ssm_beta", "linear_attn.in_proj_b"),
        ("ssm_out", "linear_attn.out_proj"),
        ("ssm_norm", "linear_attn.norm"),
        ("ssm_conv1d", "linear_attn.conv1d"),
        ("ssm_dt", "linear_attn.dt_proj"),
        ("ssm_ba", "linear_attn.in_proj_ba"),
        ("ffn_gate", "mlp.gate_proj"),
        ("ffn_up", "mlp.up_proj"),
        ("ffn_down", "mlp.down_proj"),
        ("ffn_gate_inp", "mlp.gate"),
        ("ffn_gate_inp_shexp", "mlp.shared_expert_gate"),
        ("ffn_gate_shexp", "mlp.shared_expert.gate_proj"),
        ("ffn_up_shexp", "mlp.shared_expert.up_proj"),
        ("ffn_down_shexp", "mlp.shared_expert.down_proj"),
        ("ffn_gate_exps", "mlp.switch_mlp.gate_proj"),
        ("ffn_up_exps", "mlp.switch_mlp.up_proj"),
        ("ffn_down_exps", "mlp.switch_mlp.down_proj"),
    ],
};

/// Gemma 4's text model (per-layer embeddings; `layer_output_scale.weight` is `layer_scalar`).
const GEMMA4: Names = Names {
    top: &[
        ("token_embd", "model.embed_tokens"),
        ("output_norm", "model.norm"),
        ("output", "lm_head"),
        ("per_layer_token_embd", "model.embed_tokens_per_layer"),
        ("per_layer_model_proj", "model.per_layer_model_projection"),
        ("per_layer_proj_norm", "model.per_layer_projection_norm"),
    ],
    block: &[
        ("attn_norm", "input_layernorm"),
        ("post_attention_norm", "post_attention_layernorm"),
        ("ffn_norm", "pre_feedforward_layernorm"),
        ("post_ffw_norm", "post_feedforward_layernorm"),
        ("attn_q_norm", "self_attn.q_norm"),
        ("attn_k_norm", "self_attn.k_norm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj"),
        ("ffn_gate", "mlp.gate_proj"),
        ("ffn_up", "mlp.up_proj"),
        ("ffn_down", "mlp.down_proj"),
        ("inp_gate", "per_layer_input_gate"),
        ("proj", "per_layer_projection"),
        ("post_norm", "post_per_layer_input_norm"),
        ("layer_output_scale", "layer_scalar"),
    ],
};

/// gpt-oss's (the experts under provisional names, put back by [`gpt_oss_restore`]).
const GPT_OSS: Names = Names {
    top: &[("token_embd", "model.embed_tokens"), ("output_norm", "model.norm"), ("output", "lm_head")],
    block: &[
        ("attn_norm", "input_layernorm"),
        ("post_attention_norm", "post_attention_layernorm"),
        ("attn_q", "self_attn.q_proj"),
        ("attn_k", "self_attn.k_proj"),
        ("attn_v", "self_attn.v_proj"),
        ("attn_output", "self_attn.o_proj"),
        ("attn_sinks", "self_attn.sinks"),
        ("ffn_gate_inp", "mlp.router"),
        ("ffn_gate_exps", "mlp.experts.gate_proj"),
        ("ffn_up_exps", "mlp.experts.up_proj"),
        ("ffn_down_exps", "mlp.experts.down_proj"),
    ],
};

/// The keys every architecture's config.json shares, from the metadata.
fn common(m: &Meta, arch: &str, model_type: &str) -> Result<Map<String, Value>> {
    let key = |k: &str| format!("{arch}.{k}");
    let hidden = m.require(&key("embedding_length"))?;
    let heads = m.require(&key("attention.head_count"))?;
    let mut c = Map::new();
    c.insert("model_type".into(), json!(model_type));
    c.insert("hidden_size".into(), json!(hidden));
    c.insert("num_hidden_layers".into(), json!(m.require(&key("block_count"))?));
    c.insert("num_attention_heads".into(), json!(heads));
    c.insert("num_key_value_heads".into(), json!(m.number(&key("attention.head_count_kv")).map_or(heads, |v| v as usize)));
    c.insert("head_dim".into(), json!(m.number(&key("attention.key_length")).map_or(hidden / heads, |v| v as usize)));
    if let Some(ff) = m.number(&key("feed_forward_length")) {
        c.insert("intermediate_size".into(), json!(ff as usize));
    }
    c.insert("vocab_size".into(), json!(m.vocab_size(arch)));
    c.insert("rms_norm_eps".into(), json!(m.number(&key("attention.layer_norm_rms_epsilon")).unwrap_or(1e-6)));
    c.insert("max_position_embeddings".into(), json!(m.number(&key("context_length")).map_or(4096, |v| v as usize)));
    c.insert("tie_word_embeddings".into(), json!(!m.has_tensor("output.weight")));
    if let Some(bos) = m.number("tokenizer.ggml.bos_token_id") {
        c.insert("bos_token_id".into(), json!(bos as u32));
    }
    let eos: Vec<u32> =
        ["tokenizer.ggml.eos_token_id", "tokenizer.ggml.eot_token_id"].iter().filter_map(|k| m.number(k)).map(|v| v as u32).collect();
    c.insert("eos_token_id".into(), json!(eos));
    Ok(c)
}

fn gemma3_config(m: &Meta, model_type: &str) -> Result<Value> {
    let arch = "gemma3";
    let key = |k: &str| format!("{arch}.{k}");
    let mut c = common(m, arch, model_type)?;
    let layers = m.require(&key("block_count"))?;
    let head_dim = c["head_dim"].as_u64().unwrap_or(256) as f64;
    let window = m.number(&key("attention.sliding_window")).map(|w| w as usize);
    let pattern = m.numbers(&key("attention.sliding_window_pattern")).filter(|p| p.len() == layers);
    let sliding: Vec<bool> = match (pattern, window) {
        (Some(p), _) => p.iter().map(|&s| s != 0.0).collect(),
        (None, Some(w)) if w > 0 => (0..layers).map(|i| (i + 1) % 6 != 0).collect(),
        _ => vec![false; layers],
    };
    let types: Vec<&str> = sliding.iter().map(|&s| if s { "sliding_attention" } else { "full_attention" }).collect();
    c.insert("layer_types".into(), json!(types));
    if let Some(w) = window {
        c.insert("sliding_window".into(), json!(w));
    }
    let query_scalar = match m.number(&key("attention.scale")) {
        Some(scale) if scale > 0.0 => 1.0 / (scale * scale),
        _ if layers == 62 => c["hidden_size"].as_f64().unwrap_or(0.0) / c["num_attention_heads"].as_f64().unwrap_or(1.0),
        _ => head_dim,
    };
    c.insert("query_pre_attn_scalar".into(), json!(query_scalar));
    let mut global = json!({"rope_type": "default", "rope_theta": m.number(&key("rope.freq_base")).unwrap_or(1_000_000.0)});
    if let (Some("linear"), Some(factor)) = (m.string(&key("rope.scaling.type")).as_deref(), m.number(&key("rope.scaling.factor"))) {
        global = json!({"rope_type": "linear", "factor": factor, "rope_theta": global["rope_theta"]});
    }
    let local = json!({"rope_type": "default", "rope_theta": m.number(&key("rope.freq_base_swa")).unwrap_or(10_000.0)});
    c.insert("rope_parameters".into(), json!({"full_attention": global, "sliding_attention": local}));
    if let Some(cap) = m.number(&key("final_logit_softcapping")) {
        c.insert("final_logit_softcapping".into(), json!(cap));
    }
    c.insert("hidden_activation".into(), json!("gelu_pytorch_tanh"));
    Ok(Value::Object(c))
}

/// `rope_parameters` from the RoPE keys: θ, and YaRN's or linear scaling's where
/// `rope.scaling.type` names them.
fn rope_parameters(m: &Meta, arch: &str) -> Value {
    let key = |k: &str| format!("{arch}.{k}");
    let theta = m.number(&key("rope.freq_base")).unwrap_or(10_000.0);
    match (m.string(&key("rope.scaling.type")).as_deref(), m.number(&key("rope.scaling.factor"))) {
        (Some("yarn"), Some(factor)) => {
            let mut p = json!({"rope_type": "yarn", "rope_theta": theta, "factor": factor});
            if let Some(n) = m.number(&key("rope.scaling.original_context_length")) {
                p["original_max_position_embeddings"] = json!(n as u64);
            }
            for (gguf, hf) in [("yarn_beta_fast", "beta_fast"), ("yarn_beta_slow", "beta_slow"), ("yarn_attn_factor", "attention_factor")] {
                if let Some(v) = m.number(&key(&format!("rope.scaling.{gguf}"))) {
                    p[hf] = json!(v);
                }
            }
            p
        }
        (Some("linear"), Some(factor)) => json!({"rope_type": "linear", "rope_theta": theta, "factor": factor}),
        _ => json!({"rope_type": "default", "rope_theta": theta}),
    }
}

fn mistral3_config(m: &Meta, model_type: &str) -> Result<Value> {
    let key = |k: &str| format!("mistral3.{k}");
    let mut c = common(m, "mistral3", model_type)?;
    let mut rope = rope_parameters(m, "mistral3");
    if let (Some("yarn"), Some(mscale)) = (rope["rope_type"].as_str(), m.number(&key("rope.scaling.yarn_log_multiplier"))) {
        rope["mscale"] = json!(mscale);
        rope["mscale_all_dim"] = json!(mscale);
    }
    if let Some(beta) = m.number(&key("attention.temperature_scale")) {
        rope["llama_4_scaling_beta"] = json!(beta);
    }
    c.insert("rope_parameters".into(), rope);
    Ok(Value::Object(c))
}

/// Q and K rows back in Hugging Face's order (packed rows move with their scales).
fn mistral3_restore(tensors: &mut HashMap<String, Array>, config: &Value, _path: &Path) -> Result<()> {
    let get = |k: &str| config.get(k).and_then(Value::as_i64).unwrap_or(0) as i32;
    let head_dim = get("head_dim");
    for (projection, heads) in [("q_proj", get("num_attention_heads")), ("k_proj", get("num_key_value_heads"))] {
        let rows = unpermuted_rows(heads, head_dim);
        for layer in 0..get("num_hidden_layers") {
            permute_rows(tensors, &format!("model.layers.{layer}.self_attn.{projection}"), &rows)?;
        }
    }
    Ok(())
}

/// llama.cpp's converter interleaves the two halves of each head's Q and K rows (ggml rotates
/// adjacent pairs): for each head, the rows of Hugging Face's order are its even rows, then its odd ones.
fn unpermuted_rows(heads: i32, head_dim: i32) -> Array {
    let idx: Vec<i32> =
        (0..heads).flat_map(|h| (0..2).flat_map(move |j| (0..head_dim / 2).map(move |i| h * head_dim + 2 * i + j))).collect();
    Array::from_slice(&idx, &[idx.len() as i32])
}

fn gpt_oss_config(m: &Meta, model_type: &str) -> Result<Value> {
    let key = |k: &str| format!("gpt-oss.{k}");
    let mut c = common(m, "gpt-oss", model_type)?;
    c.insert("num_local_experts".into(), json!(m.require(&key("expert_count"))?));
    c.insert("num_experts_per_tok".into(), json!(m.require(&key("expert_used_count"))?));
    if let Some(width) = m.number(&key("expert_feed_forward_length")) {
        c.insert("intermediate_size".into(), json!(width as usize));
    }
    if let Some(window) = m.number(&key("attention.sliding_window")) {
        c.insert("sliding_window".into(), json!(window as usize));
    }
    let mut rope = rope_parameters(m, "gpt-oss");
    if rope["rope_type"] == "yarn" {
        rope["truncate"] = json!(false);
    }
    c.insert("rope_parameters".into(), rope);
    c.insert("attention_bias".into(), json!(true));
    Ok(Value::Object(c))
}

/// One expert projection as stored: MXFP4 (our block reader's) or dense.
enum Experts {
    Mxfp4 { weight: Array, scales: Array },
    Dense(Array),
}

/// `{prefix}.weight` (and `.scales`, `.biases`): MXFP4 kept packed; an affine-packed one (a file
/// quantized to Q8_0 or Q4_0 throughout) widened, as the family reads experts dense or MXFP4.
fn take_experts(tensors: &mut HashMap<String, Array>, prefix: &str, path: &Path) -> Result<Option<Experts>> {
    let Some(weight) = tensors.remove(&format!("{prefix}.weight")) else { return Ok(None) };
    let scales = tensors.remove(&format!("{prefix}.scales"));
    let biases = tensors.remove(&format!("{prefix}.biases"));
    Ok(Some(match (scales, biases) {
        (None, _) => Experts::Dense(weight),
        (Some(scales), None) => Experts::Mxfp4 { weight, scales },
        (Some(scales), Some(biases)) => {
            const GROUP: i32 = 32;
            let columns = scales.dim(-1) * GROUP;
            let bits = weight.dim(-1) * 32 / columns.max(1);
            if ![4, 8].contains(&bits) {
                return Err(EngineError::CorruptWeights {
                    path: path.into(),
                    reason: format!("`{prefix}` shapes do not fit {columns} columns in blocks of {GROUP}"),
                });
            }
            let f32 = |a: &Array| a.as_dtype(Dtype::Float32);
            Experts::Dense(ops::dequantize(&weight, f32(&scales)?, Some(&f32(&biases)?), GROUP, bits)?)
        }
    }))
}

/// `a` and `b` interleaved along `axis` (a's at even indices), as transformers stores gate and up.
fn interleave(a: &Array, b: &Array, axis: i32) -> Result<Array> {
    let axis = if axis < 0 { a.ndim() as i32 + axis } else { axis };
    let mut shape = a.shape().to_vec();
    shape[axis as usize] *= 2;
    Ok(ops::stack(&[a, b], axis + 1)?.reshape(&shape)?)
}

/// MLX's mxfp4 words [.., out, in / 8] as OpenAI's blocks [.., out, in / 32, 16]: the same bytes.
fn as_blocks(weight: &Array) -> Result<Array> {
    let bytes = weight.view_dtype(Dtype::Uint8)?;
    let mut shape = bytes.shape().to_vec();
    let last = shape.pop().expect("at least one axis");
    shape.extend([last / 16, 16]);
    Ok(bytes.reshape(&shape)?)
}

/// The sinks under their own name; the experts back in transformers' layout (gate and up
/// interleaved in one tensor, the dense ones [E, in, out]) or OpenAI's MXFP4 blocks.
fn gpt_oss_restore(tensors: &mut HashMap<String, Array>, config: &Value, path: &Path) -> Result<()> {
    let layers = config.get("num_hidden_layers").and_then(Value::as_u64).unwrap_or(0);
    let corrupt = |reason: String| EngineError::CorruptWeights { path: path.into(), reason };
    for layer in 0..layers {
        let p = format!("model.layers.{layer}");
        if let Some(sinks) = tensors.remove(&format!("{p}.self_attn.sinks.weight")) {
            tensors.insert(format!("{p}.self_attn.sinks"), sinks);
        }
        let e = format!("{p}.mlp.experts");
        match (tensors.remove(&format!("{e}.gate_proj.bias")), tensors.remove(&format!("{e}.up_proj.bias"))) {
            (Some(gate), Some(up)) => {
                tensors.insert(format!("{e}.gate_up_proj_bias"), interleave(&gate, &up, -1)?);
            }
            (None, None) => {}
            _ => return Err(corrupt(format!("`blk.{layer}.ffn_gate_exps.bias` and `ffn_up_exps.bias` must both be present"))),
        }
        if let Some(bias) = tensors.remove(&format!("{e}.down_proj.bias")) {
            tensors.insert(format!("{e}.down_proj_bias"), bias);
        }
        let gate = take_experts(tensors, &format!("{e}.gate_proj"), path)?;
        let up = take_experts(tensors, &format!("{e}.up_proj"), path)?;
        let down = take_experts(tensors, &format!("{e}.down_proj"), path)?;
        match (gate, up, down) {
            (None, None, None) => {}
            (
                Some(Experts::Mxfp4 { weight: gw, scales: gs }),
                Some(Experts::Mxfp4 { weight: uw, scales: us }),
                Some(Experts::Mxfp4 { weight: dw, scales: ds }),
            ) => {
                tensors.insert(format!("{e}.gate_up_proj_blocks"), interleave(&as_blocks(&gw)?, &as_blocks(&uw)?, 1)?);
                tensors.insert(format!("{e}.gate_up_proj_scales"), interleave(&gs, &us, 1)?);
                tensors.insert(format!("{e}.down_proj_blocks"), as_blocks(&dw)?);
                tensors.insert(format!("{e}.down_proj_scales"), ds);
            }
            (Some(Experts::Dense(g)), Some(Experts::Dense(u)), Some(Experts::Dense(d))) => {
                tensors.insert(format!("{e}.gate_up_proj"), interleave(&g, &u, 1)?.swap_axes(-1, -2)?);
                tensors.insert(format!("{e}.down_proj"), d.swap_axes(-1, -2)?);
            }
            _ => {
                return Err(corrupt(format!(
                "layer {layer}'s experts (ffn_gate_exps, ffn_up_exps, ffn_down_exps) are not all present, or not all MXFP4 or all unpacked"
            )))
            }
        }
    }
    Ok(())
}

/// Gemma 4's text config: head sizes and KV heads per layer (`per_layer_config`, from the full
/// layers' `key_length` and the sliding ones' `key_length_swa`, and the per-layer
/// `head_count_kv`), K = V where a full layer has no `attn_v`, the shared-KV layers, the per-layer
/// embeddings' width and vocabulary, and the full layers' proportional RoPE from `rope_freqs`
/// (1 for a rotated frequency pair, 1e30 for the rest).
fn gemma4_config(m: &Meta, model_type: &str) -> Result<Value> {
    let key = |k: &str| format!("gemma4.{k}");
    let mut c = common(m, "gemma4", model_type)?;
    let layers = m.require(&key("block_count"))?;
    let bad = |reason: String| EngineError::ModelFormat { path: m.path.into(), reason };
    if m.number(&key("expert_count")).is_some() {
        return Err(bad("GGUF files of Gemma 4's mixture-of-experts models are not read yet; pick the Hugging Face or MLX folder".into()));
    }
    let per_layer = |name: &str| -> Result<Vec<f64>> {
        let values = m.numbers(&key(name)).ok_or_else(|| bad(format!("GGUF metadata has no `{}`", key(name))))?;
        match values.len() {
            1 => Ok(vec![values[0]; layers]),
            n if n == layers => Ok(values),
            n => Err(bad(format!("GGUF metadata lists `{}` for {n} layers but block_count is {layers}", key(name)))),
        }
    };
    let sliding: Vec<bool> = per_layer("attention.sliding_window_pattern")?.iter().map(|&s| s != 0.0).collect();
    let kv_heads = per_layer("attention.head_count_kv")?;
    let widths = per_layer("feed_forward_length")?;
    let (full_dim, sliding_dim) = (m.require(&key("attention.key_length"))?, m.require(&key("attention.key_length_swa"))?);
    let layer_config: Map<String, Value> = (0..layers)
        .map(|i| {
            let dim = if sliding[i] { sliding_dim } else { full_dim };
            (i.to_string(), json!({"head_dim": dim, "num_key_value_heads": kv_heads[i] as usize}))
        })
        .collect();
    c.insert("per_layer_config".into(), Value::Object(layer_config));
    c.insert("head_dim".into(), json!(sliding_dim));
    c.insert("global_head_dim".into(), json!(full_dim));
    let first_sliding = sliding.iter().position(|&s| s).unwrap_or(0);
    c.insert("num_key_value_heads".into(), json!(kv_heads[first_sliding] as usize));
    let full_layers: Vec<usize> = (0..layers).filter(|&i| !sliding[i]).collect();
    let k_eq_v = !full_layers.is_empty() && full_layers.iter().all(|i| !m.has_tensor(&format!("blk.{i}.attn_v.weight")));
    c.insert("attention_k_eq_v".into(), json!(k_eq_v));
    c.insert("intermediate_size".into(), json!(widths[0] as usize));
    c.insert("use_double_wide_mlp".into(), json!(widths.iter().any(|&w| w != widths[0])));
    let types: Vec<&str> = sliding.iter().map(|&s| if s { "sliding_attention" } else { "full_attention" }).collect();
    c.insert("layer_types".into(), json!(types));
    if let Some(window) = m.number(&key("attention.sliding_window")) {
        c.insert("sliding_window".into(), json!(window as usize));
    }
    c.insert("num_kv_shared_layers".into(), json!(m.number(&key("attention.shared_kv_layers")).map_or(0, |v| v as usize)));
    if let Some(width) = m.number(&key("embedding_length_per_layer_input")).filter(|&w| w > 0.0) {
        c.insert("hidden_size_per_layer_input".into(), json!(width as usize));
        let rows = m.tensors.iter().find(|t| t.name == "per_layer_token_embd.weight").and_then(|t| t.dims.get(1).copied());
        c.insert("vocab_size_per_layer_input".into(), json!(rows.unwrap_or(c["vocab_size"].as_u64().unwrap_or(0))));
    }
    if let Some(cap) = m.number(&key("final_logit_softcapping")) {
        c.insert("final_logit_softcapping".into(), json!(cap));
    }
    let rotated = match m.tensors.iter().find(|t| t.name == "rope_freqs.weight") {
        Some(info) => {
            let parts = super::gguf_blocks::read(m.path, info)?;
            let freqs = parts[0].1.as_dtype(Dtype::Float32)?;
            freqs.eval()?;
            freqs.as_slice::<f32>().iter().filter(|&&f| f == 1.0).count()
        }
        None => full_dim / 2,
    };
    let full_rope = json!({"rope_type": "proportional", "rope_theta": m.number(&key("rope.freq_base")).unwrap_or(1_000_000.0),
        "partial_rotary_factor": rotated as f64 / (full_dim as f64 / 2.0)});
    let sliding_rope = json!({"rope_type": "default", "rope_theta": m.number(&key("rope.freq_base_swa")).unwrap_or(10_000.0)});
    c.insert("rope_parameters".into(), json!({"full_attention": full_rope, "sliding_attention": sliding_rope}));
    c.insert("hidden_activation".into(), json!("gelu_pytorch_tanh"));
    Ok(Value::Object(c))
}

/// `rope_freqs` is read into the config; `layer_scalar` is a bare name.
fn gemma4_restore(tensors: &mut HashMap<String, Array>, _config: &Value, _path: &Path) -> Result<()> {
    tensors.remove("rope_freqs.weight");
    let scalars: Vec<String> = tensors.keys().filter(|k| k.ends_with(".layer_scalar.weight")).cloned().collect();
    for name in scalars {
        let t = tensors.remove(&name).expect("listed above");
        tensors.insert(name.trim_end_matches(".weight").to_string(), t);
    }
    Ok(())
}

/// Norms back from `1 + w` (their tensors are never quantized).
fn gemma3_restore(tensors: &mut HashMap<String, Array>, _config: &Value, _path: &Path) -> Result<()> {
    for (name, t) in tensors.iter_mut() {
        if name.ends_with("norm.weight") {
            *t = ops::subtract(&*t, Array::from_f32(1.0))?;
        }
    }
    Ok(())
}

fn qwen35_config(m: &Meta, model_type: &str) -> Result<Value> {
    let arch = m.string("general.architecture").unwrap_or_default();
    let key = |k: &str| format!("{arch}.{k}");
    let mut c = common(m, &arch, model_type)?;
    // Qwen3.5's converter counts its multi-token-prediction layers in block_count (after the
    // model's own, `nextn_predict_layers` of them); like transformers and mlx-lm we do not run them.
    let mtp = m.number(&key("nextn_predict_layers")).map_or(0, |v| v as usize);
    let layers = m.require(&key("block_count"))?;
    if mtp >= layers {
        return Err(EngineError::ModelFormat {
            path: m.path.into(),
            reason: format!("GGUF metadata has {mtp} prediction layers of {layers} blocks: no model layers"),
        });
    }
    c.insert("num_hidden_layers".into(), json!(layers - mtp));
    let head_dim = c["head_dim"].as_f64().unwrap_or(256.0);
    let value_heads = m.require(&key("ssm.time_step_rank"))?;
    c.insert("linear_conv_kernel_dim".into(), json!(m.require(&key("ssm.conv_kernel"))?));
    c.insert("linear_key_head_dim".into(), json!(m.require(&key("ssm.state_size"))?));
    c.insert("linear_num_key_heads".into(), json!(m.require(&key("ssm.group_count"))?));
    c.insert("linear_num_value_heads".into(), json!(value_heads));
    c.insert("linear_value_head_dim".into(), json!(m.require(&key("ssm.inner_size"))? / value_heads.max(1)));
    c.insert("full_attention_interval".into(), json!(m.number(&key("full_attention_interval")).map_or(4, |v| v as usize)));
    let rotary = m.number(&key("rope.dimension_count")).unwrap_or(head_dim * 0.25);
    c.insert(
        "rope_parameters".into(),
        json!({"rope_type": "default", "rope_theta": m.number(&key("rope.freq_base")).unwrap_or(10_000_000.0), "partial_rotary_factor": rotary / head_dim}),
    );
    if let Some(experts) = m.number(&key("expert_count")) {
        c.insert("num_experts".into(), json!(experts as usize));
        c.insert("num_experts_per_tok".into(), json!(m.number(&key("expert_used_count")).map_or(0, |v| v as usize)));
        c.insert("moe_intermediate_size".into(), json!(m.number(&key("expert_feed_forward_length")).map_or(0, |v| v as usize)));
        let shared = m.number(&key("expert_shared_feed_forward_length")).map_or(0, |v| v as usize);
        c.insert("shared_expert_intermediate_size".into(), json!(shared));
    }
    Ok(Value::Object(c))
}

/// Linear-attention sizes from the config written above.
struct Heads {
    /// Whether the converter tiled the value heads (Qwen3.5's converter does, Qwen3-Next's not).
    tiled: bool,
    key_heads: i32,
    per_key: i32,
    key_dim: i32,
    value_dim: i32,
}

impl Heads {
    fn of(config: &Value) -> Self {
        let get = |k: &str| config.get(k).and_then(Value::as_i64).unwrap_or(0) as i32;
        let key_heads = get("linear_num_key_heads").max(1);
        Self {
            tiled: config.get("model_type").and_then(Value::as_str) != Some("qwen3_next"),
            key_heads,
            per_key: get("linear_num_value_heads") / key_heads,
            key_dim: get("linear_key_head_dim"),
            value_dim: get("linear_value_head_dim"),
        }
    }

    /// For each value head in Hugging Face's order (grouped by key head), the head the converter
    /// stored there (tiled: key head fastest).
    fn stored_order(&self) -> Vec<i32> {
        let (k, r) = (self.key_heads, self.per_key);
        (0..k).flat_map(|kh| (0..r).map(move |v| v * k + kh)).collect()
    }

    fn reordered(&self) -> bool {
        self.tiled && self.per_key > 1
    }

    /// Rows of Qwen3-Next's `in_proj_qkvz` (q, k, v, z of each key head) in the rows of
    /// `attn_qkv` then `attn_gate` stacked.
    fn qkvz_rows(&self) -> Array {
        let (k, dk, group) = (self.key_heads, self.key_dim, self.per_key * self.value_dim);
        let (keys, values, gates) = (k * dk, 2 * k * dk, 2 * k * dk + k * group);
        let idx: Vec<i32> = (0..k)
            .flat_map(|h| {
                let q = (h * dk..(h + 1) * dk).chain(keys + h * dk..keys + (h + 1) * dk);
                q.chain(values + h * group..values + (h + 1) * group).chain(gates + h * group..gates + (h + 1) * group)
            })
            .collect();
        Array::from_slice(&idx, &[idx.len() as i32])
    }
}

/// Indices of `units` consecutive blocks of `width`, in `order`, after `offset` untouched ones.
fn unit_indices(order: &[i32], width: i32, offset: i32) -> Array {
    let idx: Vec<i32> = (0..offset).chain(order.iter().flat_map(|&u| (0..width).map(move |j| offset + u * width + j))).collect();
    Array::from_slice(&idx, &[idx.len() as i32])
}

fn qwen35_restore(tensors: &mut HashMap<String, Array>, config: &Value, path: &Path) -> Result<()> {
    // The multi-token-prediction layers (blocks past num_hidden_layers) are not run.
    let layers = config.get("num_hidden_layers").and_then(Value::as_u64).unwrap_or(0);
    tensors.retain(|name, _| {
        let block = name.strip_prefix("model.layers.").or_else(|| name.strip_prefix("blk."));
        block.and_then(|b| b.split('.').next()).and_then(|i| i.parse::<u64>().ok()).is_none_or(|i| i < layers)
    });
    let heads = Heads::of(config);
    let order = heads.stored_order();
    let corrupt = |reason: String| EngineError::CorruptWeights { path: path.into(), reason };
    let layers: Vec<String> =
        tensors.keys().filter_map(|k| k.strip_prefix("blk.").and_then(|r| r.strip_suffix(".ssm_a"))).map(String::from).collect();
    for layer in layers {
        let p = format!("model.layers.{layer}.linear_attn");
        // A_log = ln(-ssm_a); dt_bias under its own name.
        let a = tensors.remove(&format!("blk.{layer}.ssm_a")).expect("listed above");
        let mut a_log = ops::log(&ops::negative(&a.as_dtype(Dtype::Float32)?)?)?;
        let mut dt =
            tensors.remove(&format!("{p}.dt_proj.bias")).ok_or_else(|| corrupt(format!("`blk.{layer}.ssm_dt.bias` is missing")))?;
        if heads.reordered() {
            let per_head = unit_indices(&order, 1, 0);
            a_log = a_log.take_axis(&per_head, 0)?;
            dt = dt.take_axis(&per_head, 0)?;
        }
        tensors.insert(format!("{p}.A_log"), a_log);
        tensors.insert(format!("{p}.dt_bias"), dt);

        // The convolution as mlx-lm stores it, [C, K, 1].
        let conv_name = format!("{p}.conv1d.weight");
        let conv = tensors.remove(&conv_name).ok_or_else(|| corrupt(format!("`blk.{layer}.ssm_conv1d.weight` is missing")))?;
        if conv.ndim() != 2 {
            return Err(corrupt(format!(
                "`blk.{layer}.ssm_conv1d.weight` has shape {:?}; llama.cpp writes [channels, kernel]",
                conv.shape()
            )));
        }
        let qk = 2 * heads.key_heads * heads.key_dim;
        let conv = if heads.reordered() { conv.take_axis(unit_indices(&order, heads.value_dim, qk), 0)? } else { conv };
        tensors.insert(conv_name, conv.reshape(&[conv.dim(0), conv.dim(1), 1])?);

        if !heads.tiled {
            fuse_qkvz(tensors, &p, &heads.qkvz_rows(), path)?;
            continue;
        }
        if !heads.reordered() {
            continue;
        }
        permute_rows(tensors, &format!("{p}.in_proj_qkv"), &unit_indices(&order, heads.value_dim, qk))?;
        permute_rows(tensors, &format!("{p}.in_proj_z"), &unit_indices(&order, heads.value_dim, 0))?;
        permute_rows(tensors, &format!("{p}.in_proj_a"), &unit_indices(&order, 1, 0))?;
        permute_rows(tensors, &format!("{p}.in_proj_b"), &unit_indices(&order, 1, 0))?;
        permute_columns(tensors, &format!("{p}.out_proj"), &order, heads.value_dim, path)?;
    }
    Ok(())
}

/// Qwen3-Next's `in_proj_qkvz` from `attn_qkv` and `attn_gate` (both packed, or both not).
fn fuse_qkvz(tensors: &mut HashMap<String, Array>, p: &str, rows: &Array, path: &Path) -> Result<()> {
    let (qkv, z) = (format!("{p}.in_proj_qkv"), format!("{p}.in_proj_z"));
    for part in ["weight", "scales", "biases"] {
        match (tensors.remove(&format!("{qkv}.{part}")), tensors.remove(&format!("{z}.{part}"))) {
            (Some(a), Some(b)) => {
                let fused = ops::concatenate(&[a, b], 0)?.take_axis(rows, 0)?;
                tensors.insert(format!("{p}.in_proj_qkvz.{part}"), fused);
            }
            (None, None) => {}
            _ => {
                return Err(EngineError::CorruptWeights {
                    path: path.into(),
                    reason: format!("`{qkv}` and `{z}` (attn_qkv, attn_gate) are not stored alike: one has `{part}`, the other not"),
                })
            }
        }
    }
    Ok(())
}

/// Rows of a linear layer's weight (and, packed, its scales and biases: each row is its own).
fn permute_rows(tensors: &mut HashMap<String, Array>, prefix: &str, rows: &Array) -> Result<()> {
    for part in ["weight", "scales", "biases"] {
        if let Some(t) = tensors.get_mut(&format!("{prefix}.{part}")) {
            *t = t.take_axis(rows, 0)?;
        }
    }
    Ok(())
}

/// Input columns of a linear layer, in units of one value head's `width` columns.
fn permute_columns(tensors: &mut HashMap<String, Array>, prefix: &str, order: &[i32], width: i32, path: &Path) -> Result<()> {
    let weight_name = format!("{prefix}.weight");
    let Some(weight) = tensors.get(&weight_name).cloned() else { return Ok(()) };
    let Some(scales) = tensors.get(&format!("{prefix}.scales")).cloned() else {
        tensors.insert(weight_name, weight.take_axis(unit_indices(order, width, 0), 1)?);
        return Ok(());
    };
    // GGUF's blocks are 32 wide; the words a row packs tell the bits.
    const GROUP: i32 = 32;
    let columns = order.len() as i32 * width;
    let bits = weight.dim(-1) * 32 / columns;
    if ![4, 8].contains(&bits) || scales.dim(-1) * GROUP != columns {
        return Err(EngineError::CorruptWeights {
            path: path.into(),
            reason: format!("`{prefix}` shapes do not fit {columns} columns in blocks of {GROUP}"),
        });
    }
    let biases = tensors.remove(&format!("{prefix}.biases"));
    if width % GROUP == 0 {
        tensors.insert(weight_name, weight.take_axis(unit_indices(order, width * bits / 32, 0), 1)?);
        tensors.insert(format!("{prefix}.scales"), scales.take_axis(unit_indices(order, width / GROUP, 0), 1)?);
        if let Some(b) = biases {
            tensors.insert(format!("{prefix}.biases"), b.take_axis(unit_indices(order, width / GROUP, 0), 1)?);
        }
        return Ok(());
    }
    // A head narrower than a block: widen this matrix once, then move its columns.
    tensors.remove(&format!("{prefix}.scales"));
    let f32 = |a: &Array| a.as_dtype(Dtype::Float32);
    let dense = ops::dequantize(&weight, f32(&scales)?, biases.as_ref().map(f32).transpose()?.as_ref(), GROUP, bits)?;
    tensors.insert(weight_name, dense.take_axis(unit_indices(order, width, 0), 1)?);
    Ok(())
}

#[cfg(test)]
mod tests {
    use mlx_rs::ops::indexing::IndexOp;

    use super::*;

    #[test]
    fn value_heads_back_to_grouped_order() {
        // 2 key heads, 2 value heads each: stored K0v0 K1v0 K0v1 K1v1; grouped K0v0 K0v1 K1v0 K1v1.
        let heads = Heads { tiled: true, key_heads: 2, per_key: 2, key_dim: 1, value_dim: 3 };
        assert_eq!(heads.stored_order(), [0, 2, 1, 3]);
        let idx = unit_indices(&heads.stored_order(), 2, 1);
        assert_eq!(idx.as_slice::<i32>(), [0, 1, 2, 5, 6, 3, 4, 7, 8]);
    }

    #[test]
    fn qwen3_next_projection_rows_interleave_per_key_head() {
        // 2 key heads of 1, 1 value head of 2 each: attn_qkv rows q0 q1 k0 k1 v0 v0 v1 v1, then
        // attn_gate z0 z0 z1 z1; in_proj_qkvz is q0 k0 v0 v0 z0 z0 q1 k1 v1 v1 z1 z1.
        let heads = Heads { tiled: false, key_heads: 2, per_key: 1, key_dim: 1, value_dim: 2 };
        assert_eq!(heads.qkvz_rows().as_slice::<i32>(), [0, 2, 4, 5, 8, 9, 1, 3, 6, 7, 10, 11]);
    }

    /// gpt-oss's MXFP4 experts as our block reader gives them (gate, up, down: MLX's words and
    /// e8m0 scales) come back as OpenAI's blocks, still packed, gate and up rows interleaved.
    #[test]
    fn gpt_oss_mxfp4_experts_stay_packed() {
        let (experts, width, hidden) = (2, 2, 32);
        let words = |rows: i32, tag: u32| {
            let v: Vec<u32> = (0..experts * rows * hidden / 8).map(|i| tag << 24 | i as u32).collect();
            Array::from_slice(&v, &[experts, rows, hidden / 8])
        };
        let scales = |rows: i32, tag: u8| Array::from_slice(&vec![tag; (experts * rows) as usize], &[experts, rows, 1]);
        let mut t = HashMap::new();
        let e = "model.layers.0.mlp.experts";
        for (name, rows, tag) in [("gate", width, 1u8), ("up", width, 2), ("down", hidden, 3)] {
            t.insert(format!("{e}.{name}_proj.weight"), words(rows, tag as u32));
            t.insert(format!("{e}.{name}_proj.scales"), scales(rows, tag));
        }
        gpt_oss_restore(&mut t, &json!({"num_hidden_layers": 1}), Path::new("x")).unwrap();
        let blocks = &t[&format!("{e}.gate_up_proj_blocks")];
        assert_eq!((blocks.dtype(), blocks.shape()), (Dtype::Uint8, &[experts, 2 * width, 1, 16][..]));
        let row_scales = t[&format!("{e}.gate_up_proj_scales")].reshape(&[-1]).unwrap().as_dtype(Dtype::Int32).unwrap();
        row_scales.eval().unwrap();
        assert_eq!(row_scales.as_slice::<i32>(), [1, 2, 1, 2, 1, 2, 1, 2]);
        // Each row's first word's top byte says where it came from: gate, up, gate, up.
        let tags = blocks.index((0, .., 0, 3)).as_dtype(Dtype::Int32).unwrap();
        tags.eval().unwrap();
        assert_eq!(tags.as_slice::<i32>(), [1, 2, 1, 2]);
        assert_eq!(t[&format!("{e}.down_proj_blocks")].shape(), [experts, hidden, 1, 16]);
        assert!(!t.contains_key(&format!("{e}.gate_proj.weight")));
    }

    #[test]
    fn packed_columns_move_with_their_scales() {
        // One row, two heads of 32 columns each, 8-bit: head 1's values first after the move.
        let order = [1, 0];
        let row: Vec<f32> = (0..64).map(|i| i as f32).collect();
        let w = Array::from_slice(&row, &[1, 64]);
        let (packed, scales, biases) = ops::quantize(&w, 32, 8).unwrap();
        let mut t = HashMap::new();
        t.insert("m.weight".to_string(), packed);
        t.insert("m.scales".to_string(), scales);
        t.insert("m.biases".to_string(), biases);
        permute_columns(&mut t, "m", &order, 32, Path::new("x")).unwrap();
        let back = ops::dequantize(&t["m.weight"], &t["m.scales"], Some(&t["m.biases"]), 32, 8).unwrap();
        let back = back.index((0, ..));
        back.eval().unwrap();
        let v = back.as_slice::<f32>();
        assert!((v[0] - 32.0).abs() < 0.2 && (v[32] - 0.0).abs() < 0.2, "{:?}", &v[..4]);
    }
}
