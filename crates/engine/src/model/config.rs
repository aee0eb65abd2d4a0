//! One normalised description of a text model, read from either config.json dialect
//! (transformers 4 keys or transformers 5's `rope_parameters`/`layer_types`) or GGUF metadata.

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use crate::error::{EngineError, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub enum LayerKind {
    Full,
    Sliding,
    /// Linear attention with a recurrent state (e.g. Gated DeltaNet).
    Linear,
    /// A gated short convolution, keeping only its last few inputs.
    Convolution,
}

impl LayerKind {
    /// A `layer_types` entry as config.json writes it.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "full_attention" => Some(Self::Full),
            "sliding_attention" => Some(Self::Sliding),
            "linear_attention" => Some(Self::Linear),
            "conv" => Some(Self::Convolution),
            _ => None,
        }
    }

    /// The `layer_types` entry config.json writes for it.
    pub fn name(self) -> &'static str {
        match self {
            Self::Full => "full_attention",
            Self::Sliding => "sliding_attention",
            Self::Linear => "linear_attention",
            Self::Convolution => "conv",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub enum Activation {
    Silu,
    GeluTanh,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub enum RopeScaling {
    None,
    /// Positions divided by `factor`.
    Linear {
        factor: f32,
    },
    /// `llama3`: long wavelengths slowed by `factor`, short ones kept, a smooth ramp between.
    Llama3 {
        factor: f32,
        low_freq_factor: f32,
        high_freq_factor: f32,
        original_max_position: f32,
    },
    /// `proportional`: only the first `partial_rotary_factor × head_dim / 2` frequency
    /// pairs rotate (exponents over the whole head_dim), the rest have frequency 0; frequencies
    /// are divided by `factor`.
    Proportional {
        factor: f32,
        partial_rotary_factor: f32,
    },
    /// `yarn`: frequencies blended between `factor`-slowed (long wavelengths) and unchanged
    /// (short ones) by a ramp over the dimensions whose rotations within
    /// `original_max_position` lie between `beta_slow` and `beta_fast`; queries and keys are
    /// scaled by `attention_factor` (by default `0.1 ln(factor) + 1`).
    Yarn {
        factor: f32,
        beta_fast: f32,
        beta_slow: f32,
        original_max_position: f32,
        /// Round the ramp's ends outwards to whole dimensions (transformers' default).
        truncate: bool,
        attention_factor: f32,
    },
}

/// Queries multiplied by `1 + beta · ln(1 + floor(position / interval))` after RoPE, so attention
/// sharpens past the context the model was pretrained on (`llama_4_scaling_beta` beside
/// `original_max_position_embeddings` in `rope_parameters`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct QueryPositionScale {
    pub beta: f32,
    pub interval: usize,
}

impl QueryPositionScale {
    /// The factor for a query at `position`, in float32 as transformers computes it.
    pub fn at(&self, position: usize) -> f32 {
        1.0 + self.beta * (1.0 + (position / self.interval) as f32).ln()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RopeConfig {
    pub theta: f32,
    pub scaling: RopeScaling,
}

/// MLX affine quantization of linear layers (and possibly embeddings).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Quantization {
    pub group_size: i32,
    pub bits: i32,
    /// Per-layer settings by weight prefix; `None` means that layer is not quantized.
    pub overrides: HashMap<String, Option<(i32, i32)>>,
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct TextConfig {
    /// `model_type` as Hugging Face names it (the text config's, for a multimodal checkpoint).
    pub arch: String,
    pub hidden_size: usize,
    pub intermediate_size: usize,
    pub num_layers: usize,
    pub num_heads: usize,
    pub num_kv_heads: usize,
    pub head_dim: usize,
    pub vocab_size: usize,
    pub rms_norm_eps: f32,
    pub max_position: usize,
    pub tie_word_embeddings: bool,
    pub attention_bias: bool,
    pub mlp_bias: bool,
    pub activation: Activation,
    /// RoPE of full-attention layers.
    pub rope: RopeConfig,
    /// RoPE of sliding-window layers, where it differs.
    pub rope_local: Option<RopeConfig>,
    /// Pairs rotated interleaved (GPT-J) rather than in halves; some GGUF conversions' layout.
    pub rope_traditional: bool,
    /// Queries scaled by their position after RoPE, where the rope parameters ask for it.
    pub query_position_scale: Option<QueryPositionScale>,
    pub layer_kinds: Vec<LayerKind>,
    pub sliding_window: Option<usize>,
    /// Attention scale is `query_pre_attn_scalar^-0.5` when set, else `head_dim^-0.5`.
    pub query_pre_attn_scalar: Option<f32>,
    pub final_logit_softcap: Option<f32>,
    pub attn_logit_softcap: Option<f32>,
    pub bos_token_id: Option<u32>,
    pub eos_token_ids: Vec<u32>,
    /// The checkpoint's own float dtype (`bfloat16`, `float16`, `float32`).
    pub dtype: Option<String>,
    pub quantization: Option<Quantization>,
}

/// What config.json means when it leaves a shared key out, where model families differ (each
/// family says so in its registry entry; see `registry::defaults`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ConfigDefaults {
    /// `rope_theta` of a config with neither `rope_parameters` nor `rope_theta`.
    pub rope_theta: f32,
    pub tie_word_embeddings: bool,
    pub attention_bias: bool,
    /// Read `sliding_window_pattern` (transformers 4 keys, no `layer_types`): every
    /// `pattern`-th layer is global, the others slide.
    pub sliding_window_pattern: bool,
}

impl Default for ConfigDefaults {
    fn default() -> Self {
        Self { rope_theta: 10_000.0, tie_word_embeddings: false, attention_bias: false, sliding_window_pattern: false }
    }
}

/// Reads values out of a JSON object with the fallbacks config.json files need.
struct Keys<'a> {
    obj: &'a Value,
    path: &'a Path,
}

impl Keys<'_> {
    fn get(&self, key: &str) -> Option<&Value> {
        self.obj.get(key).filter(|v| !v.is_null())
    }
    fn usize(&self, key: &str) -> Option<usize> {
        self.get(key).and_then(Value::as_u64).map(|v| v as usize)
    }
    fn f32(&self, key: &str) -> Option<f32> {
        self.get(key).and_then(Value::as_f64).map(|v| v as f32)
    }
    fn bool(&self, key: &str) -> Option<bool> {
        self.get(key).and_then(Value::as_bool)
    }
    fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }
    fn require(&self, key: &str) -> Result<usize> {
        self.usize(key)
            .ok_or_else(|| EngineError::ModelFormat { path: self.path.to_path_buf(), reason: format!("config.json has no `{key}`") })
    }
}

/// A token id or a list of them (`eos_token_id` is either), as ids.
pub(crate) fn token_ids(v: Option<&Value>) -> Vec<u32> {
    match v {
        Some(Value::Number(n)) => n.as_u64().map(|n| vec![n as u32]).unwrap_or_default(),
        Some(Value::Array(a)) => a.iter().filter_map(Value::as_u64).map(|n| n as u32).collect(),
        _ => vec![],
    }
}

fn rope_from(obj: &Value, theta_key: &str, default_theta: f32, path: &Path) -> Result<RopeConfig> {
    let theta = obj.get(theta_key).and_then(Value::as_f64).map(|v| v as f32).unwrap_or(default_theta);
    Ok(RopeConfig { theta, scaling: rope_scaling(obj.get("rope_scaling").unwrap_or(obj), path)? })
}

/// The rope types `rope_scaling` reads; any other is refused rather than read as no scaling.
const ROPE_TYPES: &[&str] = &["default", "linear", "llama3", "yarn", "proportional"];

/// `rope_scaling` (v4) or the scaling part of a `rope_parameters` entry (v5).
fn rope_scaling(s: &Value, path: &Path) -> Result<RopeScaling> {
    let kind = s.get("rope_type").or_else(|| s.get("type")).and_then(Value::as_str).unwrap_or("default");
    let num = |k: &str, d: f32| s.get(k).and_then(Value::as_f64).map(|v| v as f32).unwrap_or(d);
    Ok(match kind {
        "default" => RopeScaling::None,
        "linear" => RopeScaling::Linear { factor: num("factor", 1.0) },
        "llama3" => RopeScaling::Llama3 {
            factor: num("factor", 8.0),
            low_freq_factor: num("low_freq_factor", 1.0),
            high_freq_factor: num("high_freq_factor", 4.0),
            original_max_position: num("original_max_position_embeddings", 8192.0),
        },
        "yarn" => {
            let factor = num("factor", 1.0);
            // transformers' yarn_get_mscale, and the DeepSeek form when both mscales are given.
            let mscale = |scale: f32, m: f32| if scale <= 1.0 { 1.0 } else { 0.1 * m * scale.ln() + 1.0 };
            let attention_factor = match (s.get("attention_factor").and_then(Value::as_f64), num("mscale", 0.0), num("mscale_all_dim", 0.0))
            {
                (Some(a), _, _) => a as f32,
                (None, m, all) if m != 0.0 && all != 0.0 => mscale(factor, m) / mscale(factor, all),
                _ => mscale(factor, 1.0),
            };
            RopeScaling::Yarn {
                factor,
                beta_fast: num("beta_fast", 32.0),
                beta_slow: num("beta_slow", 1.0),
                original_max_position: num("original_max_position_embeddings", 4096.0),
                truncate: s.get("truncate").and_then(Value::as_bool).unwrap_or(true),
                attention_factor,
            }
        }
        "proportional" => {
            RopeScaling::Proportional { factor: num("factor", 1.0), partial_rotary_factor: num("partial_rotary_factor", 1.0) }
        }
        other => {
            return Err(EngineError::ModelFormat {
                path: path.into(),
                reason: format!("config.json's rope type `{other}` is not supported ({})", ROPE_TYPES.join(", ")),
            })
        }
    })
}

/// `llama_4_scaling_beta` in the rope parameters (v5) or `rope_scaling` (v4): the queries' position
/// scale, every `original_max_position_embeddings` positions.
fn query_position_scale(s: &Value, path: &Path) -> Result<Option<QueryPositionScale>> {
    let Some(beta) = s.get("llama_4_scaling_beta").and_then(Value::as_f64) else { return Ok(None) };
    match s.get("original_max_position_embeddings").and_then(Value::as_u64) {
        Some(interval) if interval > 0 => Ok(Some(QueryPositionScale { beta: beta as f32, interval: interval as usize })),
        _ => Err(EngineError::ModelFormat {
            path: path.into(),
            reason: "config.json's rope parameters have `llama_4_scaling_beta` without a positive `original_max_position_embeddings`"
                .into(),
        }),
    }
}

impl TextConfig {
    /// Parse a Hugging Face config.json (the text part for multimodal configs).
    /// `defaults_of` says what a model type means by a key it leaves out (`registry::defaults`).
    pub fn from_hf_json(root: &Value, path: &Path, defaults_of: fn(&str) -> ConfigDefaults) -> Result<Self> {
        let obj = root.get("text_config").filter(|v| v.is_object()).unwrap_or(root);
        let k = Keys { obj, path };
        let arch = k
            .str("model_type")
            .or_else(|| root.get("model_type").and_then(Value::as_str))
            .ok_or_else(|| EngineError::ModelFormat { path: path.into(), reason: "config.json has no `model_type`".into() })?
            .to_string();
        let defaults = defaults_of(&arch);
        let hidden_size = k.require("hidden_size")?;
        let num_heads = k.require("num_attention_heads")?;
        let num_layers = k.require("num_hidden_layers")?;
        // Checked before anything is made per layer: a stranger's config can claim 2^62 layers.
        if num_layers as u64 > confab_limits::MODEL_LAYERS.value {
            return Err(EngineError::ModelFormat {
                path: path.into(),
                reason: format!("config.json's num_hidden_layers is {num_layers}, over the limit {}", confab_limits::MODEL_LAYERS),
            });
        }

        // v5 nests RoPE under rope_parameters, per layer type where they differ; v4 keeps flat keys.
        let (rope, rope_local, query_position_scale) = match k.get("rope_parameters") {
            Some(p) if p.get("full_attention").is_some() => (
                rope_from(&p["full_attention"], "rope_theta", 1_000_000.0, path)?,
                p.get("sliding_attention").map(|s| rope_from(s, "rope_theta", 10_000.0, path)).transpose()?,
                query_position_scale(&p["full_attention"], path)?,
            ),
            Some(p) => (rope_from(p, "rope_theta", 10_000.0, path)?, None, query_position_scale(p, path)?),
            None => {
                let rope = rope_from(obj, "rope_theta", defaults.rope_theta, path)?;
                let local = k.f32("rope_local_base_freq").map(|theta| RopeConfig { theta, scaling: RopeScaling::None });
                (rope, local, k.get("rope_scaling").map(|s| query_position_scale(s, path)).transpose()?.flatten())
            }
        };

        let sliding_window = k.usize("sliding_window");
        let layer_kinds = match k.get("layer_types").and_then(Value::as_array) {
            Some(types) => types
                .iter()
                .map(|t| {
                    t.as_str().and_then(LayerKind::from_name).ok_or_else(|| EngineError::ModelFormat {
                        path: path.into(),
                        reason: format!(
                            "config.json's layer_types has an unknown entry {t}; known: full_attention, sliding_attention, linear_attention, conv"
                        ),
                    })
                })
                .collect::<Result<Vec<_>>>()?,
            None => match (k.usize("sliding_window_pattern"), defaults.sliding_window_pattern, k.get("full_attn_idxs")) {
                // Every `pattern`-th layer is global, the others slide.
                (Some(pattern), true, _) if pattern > 0 => {
                    (0..num_layers).map(|i| if (i + 1) % pattern == 0 { LayerKind::Full } else { LayerKind::Sliding }).collect()
                }
                // transformers 4's hybrid-convolution configs: attention at these indices, gated
                // convolutions elsewhere.
                (_, _, Some(Value::Array(full))) => {
                    let full: Vec<u64> = full.iter().filter_map(Value::as_u64).collect();
                    (0..num_layers).map(|i| if full.contains(&(i as u64)) { LayerKind::Full } else { LayerKind::Convolution }).collect()
                }
                _ => vec![LayerKind::Full; num_layers],
            },
        };
        if layer_kinds.len() != num_layers {
            return Err(EngineError::ModelFormat {
                path: path.into(),
                reason: format!("layer_types lists {} layers but num_hidden_layers is {num_layers}", layer_kinds.len()),
            });
        }
        let activation = match k.str("hidden_activation").or_else(|| k.str("hidden_act")).unwrap_or("silu") {
            "gelu_pytorch_tanh" | "gelu_tanh" | "gelu" => Activation::GeluTanh,
            _ => Activation::Silu,
        };
        let mut eos = token_ids(k.get("eos_token_id"));
        for id in token_ids(root.get("eos_token_id")) {
            if !eos.contains(&id) {
                eos.push(id);
            }
        }

        Ok(Self {
            hidden_size,
            // Configs whose every layer routes to experts may have no dense width.
            // (`block_ff_dim`: transformers 4's name in hybrid-convolution configs.)
            intermediate_size: match k
                .usize("intermediate_size")
                .or_else(|| k.usize("moe_intermediate_size"))
                .or_else(|| k.usize("block_ff_dim"))
            {
                Some(i) => i,
                None => k.require("intermediate_size")?,
            },
            num_layers,
            num_heads,
            num_kv_heads: k.usize("num_key_value_heads").unwrap_or(num_heads),
            head_dim: k.usize("head_dim").unwrap_or(hidden_size / num_heads),
            vocab_size: k.require("vocab_size")?,
            rms_norm_eps: k.f32("rms_norm_eps").or_else(|| k.f32("norm_eps")).unwrap_or(1e-6),
            max_position: k.usize("max_position_embeddings").unwrap_or(4096),
            tie_word_embeddings: k
                .bool("tie_word_embeddings")
                .or_else(|| root.get("tie_word_embeddings").and_then(Value::as_bool))
                .or_else(|| k.bool("tie_embedding"))
                .unwrap_or(defaults.tie_word_embeddings),
            attention_bias: k.bool("attention_bias").unwrap_or(defaults.attention_bias),
            mlp_bias: k.bool("mlp_bias").unwrap_or(false),
            activation,
            rope,
            rope_local,
            rope_traditional: false,
            query_position_scale,
            layer_kinds,
            sliding_window,
            query_pre_attn_scalar: k.f32("query_pre_attn_scalar"),
            final_logit_softcap: k.f32("final_logit_softcapping"),
            attn_logit_softcap: k.f32("attn_logit_softcapping"),
            bos_token_id: token_ids(k.get("bos_token_id").or_else(|| root.get("bos_token_id"))).first().copied(),
            eos_token_ids: eos,
            dtype: k
                .str("torch_dtype")
                .or_else(|| k.str("dtype"))
                .or_else(|| root.get("torch_dtype").and_then(Value::as_str))
                .map(str::to_string),
            quantization: quantization(root),
            arch,
        })
    }
}

/// mlx-community's `quantization` block: defaults plus per-layer entries keyed by module path.
fn quantization(root: &Value) -> Option<Quantization> {
    let q = root.get("quantization").or_else(|| root.get("quantization_config"))?;
    let group_size = q.get("group_size")?.as_i64()? as i32;
    let bits = q.get("bits")?.as_i64()? as i32;
    let overrides = q
        .as_object()?
        .iter()
        .filter_map(|(key, v)| match v {
            Value::Bool(false) => Some((key.clone(), None)),
            Value::Object(o) => Some((
                key.clone(),
                Some((
                    o.get("group_size").and_then(Value::as_i64).unwrap_or(group_size as i64) as i32,
                    o.get("bits").and_then(Value::as_i64).unwrap_or(bits as i64) as i32,
                )),
            )),
            _ => None,
        })
        .collect();
    Some(Quantization { group_size, bits, overrides })
}

impl Quantization {
    /// Group size and bits for the layer whose weights start with `prefix`, or None if the
    /// layer is stored unquantized.
    pub fn for_layer(&self, prefix: &str) -> Option<(i32, i32)> {
        match self.overrides.get(prefix) {
            Some(setting) => *setting,
            None => Some((self.group_size, self.bits)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: Value) -> Result<TextConfig> {
        let mut root = serde_json::json!({
            "model_type": "llama", "hidden_size": 64, "num_attention_heads": 4, "num_hidden_layers": 2,
            "intermediate_size": 128, "vocab_size": 100,
        });
        root.as_object_mut().unwrap().extend(text.as_object().unwrap().clone());
        TextConfig::from_hf_json(&root, Path::new("config.json"), |_| ConfigDefaults::default())
    }

    /// Found by fuzzing the model folder: a config claiming 2^62 layers asked for that many
    /// layer kinds and aborted the process.
    #[test]
    fn a_config_claiming_absurdly_many_layers_is_refused_naming_the_limit() {
        let error = parse(serde_json::json!({"num_hidden_layers": 1u64 << 62})).expect_err("too many layers").to_string();
        assert!(error.contains("model.layers (4,096 items)"), "{error}");
        parse(serde_json::json!({"num_hidden_layers": 4096})).unwrap();
    }

    #[test]
    fn an_unknown_rope_type_is_a_load_error_naming_it() {
        for config in [
            serde_json::json!({"rope_parameters": {"rope_type": "dynamic", "rope_theta": 10000.0, "factor": 2.0}}),
            serde_json::json!({"rope_scaling": {"type": "longrope", "factor": 2.0}}),
            serde_json::json!({"rope_parameters": {"full_attention": {"rope_type": "default"}, "sliding_attention": {"rope_type": "su"}}}),
        ] {
            let error = parse(config.clone()).expect_err("an unknown rope type").to_string();
            let kind = ["dynamic", "longrope", "su"].into_iter().find(|k| config.to_string().contains(&format!("\"{k}\""))).unwrap();
            assert!(error.contains(&format!("`{kind}`")) && error.contains("config.json"), "{config}: {error}");
        }
        for known in ["default", "linear", "llama3", "yarn", "proportional"] {
            parse(serde_json::json!({"rope_parameters": {"rope_type": known, "factor": 2.0}})).unwrap();
        }
        assert_eq!(parse(serde_json::json!({})).unwrap().rope.scaling, RopeScaling::None);
        assert_eq!(parse(serde_json::json!({"rope_scaling": null})).unwrap().rope.scaling, RopeScaling::None);
    }

    #[test]
    fn the_query_position_scale_is_read_from_the_rope_parameters() {
        let yarn = serde_json::json!({"rope_parameters": {
            "rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0, "original_max_position_embeddings": 8,
            "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.1,
        }});
        let config = parse(yarn).unwrap();
        let scale = config.query_position_scale.expect("a query scale");
        assert_eq!(scale, QueryPositionScale { beta: 0.1, interval: 8 });
        assert!(matches!(config.rope.scaling, RopeScaling::Yarn { attention_factor, .. } if attention_factor == 1.0));
        assert_eq!(scale.at(0), 1.0);
        assert_eq!(scale.at(7), 1.0);
        assert!((scale.at(8) - (1.0 + 0.1 * 2f32.ln())).abs() < 1e-7);
        assert!((scale.at(47) - (1.0 + 0.1 * 6f32.ln())).abs() < 1e-7);
        assert_eq!(parse(serde_json::json!({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}})).unwrap().query_position_scale, None);
        let v4 = parse(
            serde_json::json!({"rope_scaling": {"type": "yarn", "original_max_position_embeddings": 16, "llama_4_scaling_beta": 0.2}}),
        );
        assert_eq!(v4.unwrap().query_position_scale, Some(QueryPositionScale { beta: 0.2, interval: 16 }));
        let error = parse(serde_json::json!({"rope_parameters": {"rope_type": "default", "llama_4_scaling_beta": 0.1}})).unwrap_err();
        assert!(error.to_string().contains("original_max_position_embeddings"), "{error}");
    }
}
