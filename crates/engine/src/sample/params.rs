//! What a request asks of the sampler, its validation, the defaults a model ships in its
//! Hugging Face `generation_config.json`, and the one rule that puts a person's or a client's
//! choices over those defaults ([`SamplingParams::with_choices`]): the app, the CLI and the
//! server all go through it.

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

/// What a person (the app's settings, the CLI's flags) or a client (a server request's fields)
/// chooses over a model's default sampling. `None` keeps the model's value; `stop` adds to the
/// model's own stop strings.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct SamplingChoices {
    pub temperature: Option<f32>,
    pub top_k: Option<i32>,
    pub top_p: Option<f32>,
    pub min_p: Option<f32>,
    pub repetition_penalty: Option<f32>,
    pub presence_penalty: Option<f32>,
    pub seed: Option<u64>,
    pub max_tokens: Option<u32>,
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

    /// A model's default sampling: its `generation_config.json` (parsed) where it ships one
    /// ([`Self::from_generation_config`]), the chat defaults ([`Self::chat`]) where it does not.
    pub fn model_defaults(generation_config: Option<&Value>) -> Result<Self> {
        generation_config.map_or_else(|| Ok(Self::chat()), Self::from_generation_config)
    }

    /// The sampling a request runs with: these defaults (a model's, [`Self::model_defaults`])
    /// with every setting `choices` makes over them, and the model's stop strings kept, the
    /// chosen ones after them. The app, the CLI and the server all build their requests' sampling
    /// here, so the same choices give the same settings through each.
    pub fn with_choices(&self, choices: &SamplingChoices) -> Self {
        let mut stop = self.stop.clone();
        for chosen in &choices.stop {
            if !stop.contains(chosen) {
                stop.push(chosen.clone());
            }
        }
        Self {
            temperature: choices.temperature.unwrap_or(self.temperature),
            top_k: choices.top_k.unwrap_or(self.top_k),
            top_p: choices.top_p.unwrap_or(self.top_p),
            min_p: choices.min_p.unwrap_or(self.min_p),
            repetition_penalty: choices.repetition_penalty.unwrap_or(self.repetition_penalty),
            presence_penalty: choices.presence_penalty.unwrap_or(self.presence_penalty),
            seed: choices.seed.or(self.seed),
            max_tokens: choices.max_tokens.unwrap_or(self.max_tokens),
            stop,
            ..self.clone()
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
    /// `top_k`, `top_p`, `min_p`, `repetition_penalty`, `stop_strings` (one string or a list),
    /// and `do_sample: false` meaning greedy.
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
        params.stop = stop_strings(json)?;
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

fn stop_strings(json: &Value) -> Result<Vec<String>> {
    let wrong = |other: &Value| {
        EngineError::invalid("stop_strings", format!("generation_config.json sets {other}; expected a string or a list of strings"))
    };
    let strings = match json.get("stop_strings") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(items)) => {
            items.iter().map(|item| item.as_str().map(str::to_string).ok_or_else(|| wrong(item))).collect::<Result<Vec<_>>>()?
        }
        Some(other) => return Err(wrong(other)),
    };
    if strings.iter().any(String::is_empty) {
        return Err(EngineError::invalid("stop_strings", "generation_config.json lists an empty stop string"));
    }
    Ok(strings)
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

#[cfg(test)]
mod tests {
    use super::*;

    /// As Qwen2.5-Instruct ships it, with a stop string added.
    fn qwen_like() -> Value {
        serde_json::json!({
            "do_sample": true, "eos_token_id": [151645, 151643], "repetition_penalty": 1.05,
            "temperature": 0.7, "top_p": 0.8, "top_k": 20, "stop_strings": ["<|im_end|>"]
        })
    }

    #[test]
    fn a_model_without_a_generation_config_gets_the_chat_defaults() {
        assert_eq!(SamplingParams::model_defaults(None).unwrap(), SamplingParams::chat());
        let json = qwen_like();
        let from_file = SamplingParams::model_defaults(Some(&json)).unwrap();
        assert_eq!(from_file, SamplingParams::from_generation_config(&json).unwrap());
        assert_eq!(from_file.stop, ["<|im_end|>"]);
    }

    #[test]
    fn stop_strings_are_one_string_or_a_list() {
        let one = SamplingParams::from_generation_config(&serde_json::json!({"stop_strings": "END"})).unwrap();
        assert_eq!(one.stop, ["END"]);
        for bad in [
            serde_json::json!({"stop_strings": 3}),
            serde_json::json!({"stop_strings": ["a", 1]}),
            serde_json::json!({"stop_strings": [""]}),
        ] {
            let err = SamplingParams::from_generation_config(&bad).unwrap_err().to_string();
            assert!(err.contains("`stop_strings`"), "{err}");
        }
    }

    #[test]
    fn choices_go_over_the_model_defaults_and_its_stop_strings_stay() {
        let model = SamplingParams::model_defaults(Some(&qwen_like())).unwrap();
        assert_eq!(model.with_choices(&SamplingChoices::default()), model, "no choices: the model's own");
        let choices = SamplingChoices {
            temperature: Some(0.2),
            top_k: Some(5),
            presence_penalty: Some(0.5),
            seed: Some(9),
            max_tokens: Some(64),
            stop: vec!["\n\n".into(), "<|im_end|>".into()],
            ..SamplingChoices::default()
        };
        let chosen = model.with_choices(&choices);
        let expected = SamplingParams {
            temperature: 0.2,
            top_k: 5,
            presence_penalty: 0.5,
            seed: Some(9),
            max_tokens: 64,
            stop: vec!["<|im_end|>".into(), "\n\n".into()],
            ..model.clone()
        };
        assert_eq!(chosen, expected);
        assert_eq!((chosen.top_p, chosen.repetition_penalty), (0.8, 1.05), "what was not chosen is the model's");
    }
}
