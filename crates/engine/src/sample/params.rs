//! What a request asks of the sampler, its validation, and the defaults a model ships in its
//! Hugging Face `generation_config.json`.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::error::{EngineError, Result};

/// How the next token is chosen. Every processor has an "off" value, and [`Default`] turns them
/// all off: temperature 1 samples from the model's own distribution.
///
/// Deserializing fills missing fields from [`Default`]. In `logit_bias`, a banned token is
/// written `"-inf"` (JSON has no infinity); `null` is read as `-inf` too.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct SamplingParams {
    /// Divides the logits; 0 means greedy (always the most likely token).
    pub temperature: f32,
    /// Keep only the `top_k` most likely tokens; 0 = off.
    pub top_k: i32,
    /// Nucleus: keep the smallest set of tokens whose probability reaches `top_p`; 1 = off.
    pub top_p: f32,
    /// Drop tokens less likely than `min_p` times the most likely one; 0 = off.
    pub min_p: f32,
    /// Logits of tokens seen in the last `repetition_context` tokens are divided by this when
    /// positive and multiplied by it when negative (as in transformers and mlx-lm); 1 = off.
    pub repetition_penalty: f32,
    /// How many of the most recent tokens (prompt and reply) the two penalties look at; 0 turns
    /// both off.
    pub repetition_context: usize,
    /// Subtracted from the logit of every token seen in the last `repetition_context` tokens;
    /// 0 = off.
    pub presence_penalty: f32,
    /// Added to the logits of the given token ids; `-inf` bans a token.
    #[serde(with = "bias_serde")]
    pub logit_bias: HashMap<u32, f32>,
    /// Same seed, same logits, same history → same tokens (a host-side generator that advances
    /// once per sampled token; greedy steps draw nothing). `None`: a fresh seed per sampler.
    pub seed: Option<u64>,
    /// The most tokens the reply may have.
    pub max_tokens: u32,
    /// The reply stops before the first occurrence of any of these strings. Carried for the
    /// runtime's detokenizer; the sampler itself does not look at them.
    pub stop: Vec<String>,
}

impl Default for SamplingParams {
    fn default() -> Self {
        Self {
            temperature: 1.0,
            top_k: 0,
            top_p: 1.0,
            min_p: 0.0,
            repetition_penalty: 1.0,
            repetition_context: 64,
            presence_penalty: 0.0,
            logit_bias: HashMap::new(),
            seed: None,
            max_tokens: crate::defaults::REPLY_TOKENS,
            stop: Vec::new(),
        }
    }
}

impl SamplingParams {
    /// The chat defaults (`crate::defaults`): for models without a generation_config.json, and
    /// the app's initial settings.
    pub fn chat() -> Self {
        use crate::defaults::*;
        Self {
            temperature: CHAT_TEMPERATURE,
            top_p: CHAT_TOP_P,
            top_k: CHAT_TOP_K,
            min_p: CHAT_MIN_P,
            repetition_penalty: CHAT_REPETITION_PENALTY,
            ..Self::default()
        }
    }

    /// The same settings with temperature 0: the most likely token every step.
    pub fn greedy() -> Self {
        Self { temperature: 0.0, ..Self::default() }
    }

    /// Checks every setting against its valid range; `vocab_size` bounds the `logit_bias` ids.
    pub fn validate(&self, vocab_size: usize) -> Result<()> {
        check_temperature(self.temperature)?;
        check_top_k(i64::from(self.top_k))?;
        check_top_p(self.top_p)?;
        check_min_p(self.min_p)?;
        check_repetition_penalty(self.repetition_penalty)?;
        if !self.presence_penalty.is_finite() {
            return Err(EngineError::invalid(
                "presence_penalty",
                format!("{} is not allowed; use a finite number (0 = off)", self.presence_penalty),
            ));
        }
        if self.max_tokens == 0 {
            return Err(EngineError::invalid("max_tokens", "0 allows no reply; use 1 or more"));
        }
        if self.stop.iter().any(String::is_empty) {
            return Err(EngineError::invalid("stop", "an empty stop string would end every reply at once; remove it"));
        }
        let mut banned = 0usize;
        let mut ids: Vec<_> = self.logit_bias.iter().collect();
        ids.sort_unstable_by_key(|(id, _)| **id);
        for (&id, &bias) in ids {
            if id as usize >= vocab_size {
                return Err(EngineError::invalid(
                    "logit_bias",
                    format!("token id {id} is outside the vocabulary; valid ids are 0 to {}", vocab_size.saturating_sub(1)),
                ));
            }
            if bias.is_nan() || bias == f32::INFINITY {
                return Err(EngineError::invalid(
                    "logit_bias",
                    format!("token {id}: {bias} is not allowed; use a finite number, or -inf to ban it"),
                ));
            }
            banned += usize::from(bias == f32::NEG_INFINITY);
        }
        if vocab_size > 0 && banned >= vocab_size {
            return Err(EngineError::invalid("logit_bias", "every token in the vocabulary is banned (-inf); leave at least one allowed"));
        }
        Ok(())
    }

    /// The defaults a model ships in its Hugging Face `generation_config.json`: `temperature`,
    /// `top_k`, `top_p`, `min_p`, `repetition_penalty`, and `do_sample: false` meaning greedy.
    /// Fields the file leaves out (or sets to `null`) keep [`Default`]'s value; transformers'
    /// own implicit `top_k = 50` is not applied. A field of the wrong type or out of range is an
    /// error naming it, so the caller can report it and fall back to the defaults.
    pub fn from_generation_config(json: &Value) -> Result<Self> {
        let mut params = Self::default();
        if let Some(t) = number(json, "temperature")? {
            check_temperature(t)?;
            params.temperature = t;
        }
        if let Some(k) = integer(json, "top_k")? {
            check_top_k(k)?;
            params.top_k = i32::try_from(k).unwrap_or(i32::MAX);
        }
        if let Some(p) = number(json, "top_p")? {
            check_top_p(p)?;
            params.top_p = p;
        }
        if let Some(p) = number(json, "min_p")? {
            check_min_p(p)?;
            params.min_p = p;
        }
        if let Some(p) = number(json, "repetition_penalty")? {
            check_repetition_penalty(p)?;
            params.repetition_penalty = p;
        }
        match json.get("do_sample") {
            None | Some(Value::Null) | Some(Value::Bool(true)) => {}
            Some(Value::Bool(false)) => params.temperature = 0.0,
            Some(other) => {
                return Err(EngineError::invalid("do_sample", format!("generation_config.json sets {other}; expected true or false")))
            }
        }
        Ok(params)
    }
}

fn check_temperature(t: f32) -> Result<()> {
    if t.is_finite() && t >= 0.0 {
        return Ok(());
    }
    Err(EngineError::invalid("temperature", format!("{t} is out of range; use a finite number ≥ 0 (0 = greedy)")))
}

fn check_top_k(k: i64) -> Result<()> {
    if k >= 0 {
        return Ok(());
    }
    Err(EngineError::invalid("top_k", format!("{k} is negative; use 0 (off) or a positive count")))
}

fn check_top_p(p: f32) -> Result<()> {
    if p > 0.0 && p <= 1.0 {
        return Ok(());
    }
    Err(EngineError::invalid("top_p", format!("{p} is out of range; use a value in (0, 1] (1 = off)")))
}

fn check_min_p(p: f32) -> Result<()> {
    if (0.0..1.0).contains(&p) {
        return Ok(());
    }
    Err(EngineError::invalid("min_p", format!("{p} is out of range; use a value in [0, 1) (0 = off)")))
}

fn check_repetition_penalty(p: f32) -> Result<()> {
    if p.is_finite() && p > 0.0 {
        return Ok(());
    }
    Err(EngineError::invalid(
        "repetition_penalty",
        format!("{p} is out of range; use a finite number > 0 (1 = off, above 1 discourages repeats)"),
    ))
}

fn number(json: &Value, name: &'static str) -> Result<Option<f32>> {
    match json.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => Ok(n.as_f64().map(|x| x as f32)),
        Some(other) => Err(EngineError::invalid(name, format!("generation_config.json sets {other}; expected a number"))),
    }
}

fn integer(json: &Value, name: &'static str) -> Result<Option<i64>> {
    match json.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            if let Some(i) = n.as_i64() {
                return Ok(Some(i));
            }
            match n.as_f64() {
                Some(x) if x.fract() == 0.0 && x.abs() < 1e15 => Ok(Some(x as i64)),
                _ => Err(EngineError::invalid(name, format!("generation_config.json sets {n}; expected a whole number"))),
            }
        }
        Some(other) => Err(EngineError::invalid(name, format!("generation_config.json sets {other}; expected a whole number"))),
    }
}

/// `logit_bias` in JSON: ids as string keys (JSON's rule), finite biases as numbers, and `-inf`
/// (a ban) as the string `"-inf"`, since serde_json would write it as `null`.
mod bias_serde {
    use std::collections::HashMap;

    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    #[derive(Serialize, Deserialize)]
    #[serde(untagged)]
    enum Bias {
        Number(f32),
        Text(String),
        Null(()),
    }

    pub fn serialize<S: Serializer>(map: &HashMap<u32, f32>, s: S) -> Result<S::Ok, S::Error> {
        let mut entries: Vec<_> = map.iter().collect();
        entries.sort_unstable_by_key(|(id, _)| **id);
        s.collect_map(entries.into_iter().map(|(id, &b)| {
            let value = if b.is_finite() { Bias::Number(b) } else { Bias::Text(b.to_string()) };
            (id.to_string(), value)
        }))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<HashMap<u32, f32>, D::Error> {
        let raw = HashMap::<String, Bias>::deserialize(d)?;
        raw.into_iter()
            .map(|(id, bias)| {
                let id = id.trim().parse::<u32>().map_err(|_| D::Error::custom(format!("logit_bias: `{id}` is not a token id")))?;
                let bias = match bias {
                    Bias::Number(b) => b,
                    Bias::Null(()) => f32::NEG_INFINITY,
                    Bias::Text(t) => match t.trim().to_ascii_lowercase().as_str() {
                        "-inf" | "-infinity" => f32::NEG_INFINITY,
                        _ => t
                            .trim()
                            .parse::<f32>()
                            .map_err(|_| D::Error::custom(format!("logit_bias: token {id}: `{t}` is not a number or -inf")))?,
                    },
                };
                Ok((id, bias))
            })
            .collect()
    }
}
