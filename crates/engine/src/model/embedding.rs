//! Embedding models: a transformer whose final hidden states become one vector per text, as the
//! sentence-transformers files in the checkpoint folder describe it (Qwen3-Embedding,
//! EmbeddingGemma and the like). The families give the hidden states
//! (`Compute::Hidden` of sequences read whole, `Rows::Whole`); everything after them lives here: pooling, the Dense layers,
//! normalization, the prompts written before queries and documents, the length limit.
//!
//! A folder is an embedding model when its `modules.json` lists a `Pooling` module. Its modules
//! are read in order: `Transformer` (the folder itself), `Pooling` (`<path>/config.json`),
//! `Dense` (`<path>/config.json` and `<path>/model.safetensors` with `linear.weight`, optional
//! `linear.bias`), `Normalize`. The attention is bidirectional when config.json says
//! `use_bidirectional_attention` (EmbeddingGemma), causal otherwise.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array, Dtype};
use serde_json::Value;

use crate::error::{EngineError, Result};
use crate::model::{AttentionMode, Compute, Input, Rows, TextModel};

/// How a sequence's hidden states become one vector.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum Pooling {
    /// The mean over every token (prompt included, as `include_prompt: true` says).
    Mean,
    /// The last token's (Qwen3-Embedding: its tokenizer appends <|endoftext|> to read from).
    LastToken,
    /// The first token's.
    Cls,
}

/// sentence-transformers' Dense module: `activation(x · Wᵀ + b)`.
struct Dense {
    /// [out, in], float32.
    weight: Array,
    bias: Option<Array>,
    tanh: bool,
}

/// What an embedding checkpoint does after its transformer, read from its folder.
pub struct EmbeddingHead {
    pub pooling: Pooling,
    pub attention: AttentionMode,
    dense: Vec<Dense>,
    pub normalize: bool,
    /// The prompts it was trained with, by name (`query`, `document`, …), written before the text.
    pub prompts: BTreeMap<String, String>,
    /// sentence-transformers' `max_seq_length`: longer inputs are refused.
    pub max_tokens: Option<usize>,
    /// The length of the vectors it gives.
    pub dimensions: usize,
}

/// What is written before a text to embed it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum EmbedPrompt {
    /// The model's `query` prompt (none if it has none): a search query.
    Query,
    /// The model's `document` prompt (none if it has none): a passage to be found.
    #[default]
    Document,
    /// This text, as it is (Qwen3-Embedding's "Instruct: {task}\nQuery:" for another task).
    Text(String),
}

/// What the app and the server show about an embedding model.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct EmbeddingInfo {
    pub dimensions: usize,
    pub pooling: Pooling,
    pub attention: AttentionMode,
    pub normalized: bool,
    pub max_tokens: Option<usize>,
    /// The names of its prompts (`query`, `document`, …).
    pub prompts: Vec<String>,
}

/// The smallest norm divided by, as torch's `F.normalize` (eps 1e-12).
const NORM_FLOOR: f32 = 1e-12;

/// Whether `dir` is an embedding checkpoint: its modules.json lists a Pooling module.
pub fn is_embedding_folder(dir: &Path) -> bool {
    let Ok(text) = std::fs::read_to_string(dir.join("modules.json")) else { return false };
    let Ok(modules) = serde_json::from_str::<Vec<Module>>(&text) else { return false };
    modules.iter().any(|m| m.kind() == "Pooling")
}

#[derive(serde::Deserialize)]
struct Module {
    #[serde(default)]
    path: String,
    #[serde(rename = "type")]
    type_name: String,
}

impl Module {
    /// `sentence_transformers.models.Pooling` → `Pooling` (newer versions spell the module path
    /// otherwise; the class name is what counts).
    fn kind(&self) -> &str {
        self.type_name.rsplit('.').next().unwrap_or(&self.type_name)
    }
}

fn format_error(path: &Path, reason: impl Into<String>) -> EngineError {
    EngineError::ModelFormat { path: path.into(), reason: reason.into() }
}

fn read_json(path: &Path) -> Result<Value> {
    let text = std::fs::read_to_string(path).map_err(|e| EngineError::io(path, e))?;
    serde_json::from_str(&text).map_err(|e| format_error(path, format!("not valid JSON ({e})")))
}

impl EmbeddingHead {
    /// The head of the embedding checkpoint in `dir`; `Ok(None)` when it is not one.
    /// `hidden_size` is the transformer's, which the first module must take.
    pub fn read(dir: &Path, hidden_size: usize) -> Result<Option<Self>> {
        let modules_file = dir.join("modules.json");
        if !modules_file.is_file() {
            return Ok(None);
        }
        let modules: Vec<Module> = serde_json::from_value(read_json(&modules_file)?)
            .map_err(|e| format_error(&modules_file, format!("modules.json is not a list of modules ({e})")))?;
        if !modules.iter().any(|m| m.kind() == "Pooling") {
            return Ok(None);
        }
        let config = read_json(&dir.join("config.json"))?;
        let bidirectional = config.get("use_bidirectional_attention").and_then(Value::as_bool).unwrap_or(false);
        let mut head = EmbeddingHead {
            pooling: Pooling::Mean,
            attention: if bidirectional { AttentionMode::Bidirectional } else { AttentionMode::Causal },
            dense: vec![],
            normalize: false,
            prompts: BTreeMap::new(),
            max_tokens: None,
            dimensions: hidden_size,
        };
        let mut pooled = false;
        for (i, module) in modules.iter().enumerate() {
            let folder = dir.join(&module.path);
            match module.kind() {
                "Transformer" if i == 0 && module.path.is_empty() => {}
                "Transformer" => return Err(format_error(&modules_file, "the Transformer module must be the folder itself, first")),
                "Pooling" if !pooled => {
                    head.pooling = read_pooling(&folder.join("config.json"))?;
                    pooled = true;
                }
                "Dense" if pooled => {
                    let dense = read_dense(&folder, head.dimensions)?;
                    head.dimensions = dense.weight.dim(0) as usize;
                    head.dense.push(dense);
                }
                "Normalize" if pooled => head.normalize = true,
                other => {
                    return Err(format_error(
                        &modules_file,
                        format!(
                            "module {i} (`{other}` at `{}`) is not one Confab reads (Transformer, Pooling, Dense, Normalize)",
                            module.path
                        ),
                    ))
                }
            }
        }
        let st_config = dir.join("config_sentence_transformers.json");
        if st_config.is_file() {
            let json = read_json(&st_config)?;
            if let Some(prompts) = json.get("prompts").and_then(Value::as_object) {
                head.prompts = prompts.iter().filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string()))).collect();
            }
        }
        let bert_config = dir.join("sentence_bert_config.json");
        if bert_config.is_file() {
            head.max_tokens = read_json(&bert_config)?.get("max_seq_length").and_then(Value::as_u64).map(|n| n as usize);
        }
        Ok(Some(head))
    }

    pub fn info(&self) -> EmbeddingInfo {
        EmbeddingInfo {
            dimensions: self.dimensions,
            pooling: self.pooling,
            attention: self.attention,
            normalized: self.normalize,
            max_tokens: self.max_tokens,
            prompts: self.prompts.keys().cloned().collect(),
        }
    }

    /// The text fed to the model for `text` with `prompt` written before it, as
    /// sentence-transformers' `encode_query` / `encode_document` / `encode(prompt=…)` do.
    pub fn prompted(&self, text: &str, prompt: &EmbedPrompt) -> String {
        let before = match prompt {
            EmbedPrompt::Query => self.prompts.get("query").map(String::as_str).unwrap_or(""),
            // sentence-transformers' encode_document tries these names in turn.
            EmbedPrompt::Document => {
                ["document", "passage", "corpus"].iter().find_map(|n| self.prompts.get(*n)).map(String::as_str).unwrap_or("")
            }
            EmbedPrompt::Text(text) => text,
        };
        format!("{before}{text}")
    }

    /// Checks an input's length against the model's limit.
    pub fn check_length(&self, index: usize, tokens: usize) -> Result<()> {
        if tokens == 0 {
            return Err(EngineError::invalid("input", format!("input {index} is empty after tokenization")));
        }
        match self.max_tokens {
            Some(max) if tokens > max => Err(EngineError::invalid(
                "input",
                format!("input {index} is {tokens} tokens; this embedding model reads at most {max}. Split the text into smaller pieces."),
            )),
            _ => Ok(()),
        }
    }

    /// One text's token ids (prompt and special tokens included) → its vector.
    pub fn embed(&self, model: &dyn TextModel, ids: &[u32]) -> Result<Vec<f32>> {
        let tokens = Array::from_slice(&ids.iter().map(|&i| i as i32).collect::<Vec<_>>(), &[1, ids.len() as i32]);
        let whole = Rows::Whole { mode: self.attention, lengths: None };
        let hidden = model.forward(Input::Tokens(&tokens), whole, Compute::Hidden)?.into_hidden()?.as_dtype(Dtype::Float32)?;
        let pooled = match self.pooling {
            Pooling::Mean => hidden.mean_axis(1, false)?,
            Pooling::LastToken => hidden.index((.., -1, ..)),
            Pooling::Cls => hidden.index((.., 0, ..)),
        };
        Ok(self.finish(pooled)?.pop().expect("one vector"))
    }

    /// Several texts' token ids → their vectors, in order, in one forward pass: the texts
    /// right-padded to the longest, the padding masked out of attention
    /// (`Rows::Whole` with lengths) and out of the pooling. Each vector equals the one
    /// `embed` gives that text alone but for summation order (tests/fidelity_embeddings.rs).
    /// One text, or a model that cannot pad, goes one at a time through `embed`.
    pub fn embed_batch(&self, model: &dyn TextModel, texts: &[&[u32]]) -> Result<Vec<Vec<f32>>> {
        if texts.len() == 1 || !model.accepts().whole_sequences {
            return texts.iter().map(|ids| self.embed(model, ids)).collect();
        }
        let lengths: Vec<usize> = texts.iter().map(|ids| ids.len()).collect();
        if lengths.contains(&0) {
            return Err(EngineError::invalid("input", "an empty text has no tokens to embed"));
        }
        let (rows, l) = (texts.len(), lengths.iter().copied().max().unwrap_or(0));
        // Padding with id 0: any id will do, since no real position sees it.
        let mut padded = vec![0i32; rows * l];
        for (row, ids) in padded.chunks_mut(l).zip(texts) {
            for (slot, &id) in row.iter_mut().zip(ids.iter()) {
                *slot = id as i32;
            }
        }
        let tokens = Array::from_slice(&padded, &[rows as i32, l as i32]);
        let whole = Rows::Whole { mode: self.attention, lengths: Some(&lengths) };
        let hidden = model.forward(Input::Tokens(&tokens), whole, Compute::Hidden)?.into_hidden()?.as_dtype(Dtype::Float32)?;
        let pooled = match self.pooling {
            Pooling::Mean => {
                // The mean over each row's real positions: padding weighs 0.
                let real: Vec<f32> = lengths.iter().flat_map(|&n| (0..l).map(move |p| if p < n { 1.0 } else { 0.0 })).collect();
                let real = Array::from_slice(&real, &[rows as i32, l as i32, 1]);
                let counts = Array::from_slice(&lengths.iter().map(|&n| n as f32).collect::<Vec<_>>(), &[rows as i32, 1]);
                ops::divide(&ops::sum_axis(&ops::multiply(&hidden, &real)?, 1, false)?, &counts)?
            }
            Pooling::LastToken => {
                let last = Array::from_slice(&lengths.iter().map(|&n| n as i32 - 1).collect::<Vec<_>>(), &[rows as i32, 1, 1]);
                hidden.take_along_axis(&last, 1)?.squeeze_axes(&[1])?
            }
            Pooling::Cls => hidden.index((.., 0, ..)),
        };
        self.finish(pooled)
    }

    /// Pooled vectors [B, hidden] through the Dense layers and the normalization → B vectors.
    fn finish(&self, mut x: Array) -> Result<Vec<Vec<f32>>> {
        for dense in &self.dense {
            x = ops::matmul(&x, dense.weight.t())?;
            if let Some(bias) = &dense.bias {
                x = ops::add(&x, bias)?;
            }
            if dense.tanh {
                x = ops::tanh(&x)?;
            }
        }
        if self.normalize {
            let norm = ops::sqrt(&ops::sum_axis(&ops::square(&x)?, -1, true)?)?;
            x = ops::divide(&x, &ops::maximum(&norm, Array::from_f32(NORM_FLOOR))?)?;
        }
        x.eval()?;
        let width = x.dim(1) as usize;
        Ok(x.as_slice::<f32>().chunks(width).map(<[f32]>::to_vec).collect())
    }
}

fn read_pooling(file: &Path) -> Result<Pooling> {
    let json = read_json(file)?;
    let flag = |key: &str| json.get(key).and_then(Value::as_bool).unwrap_or(false);
    if json.get("include_prompt").and_then(Value::as_bool) == Some(false) {
        return Err(format_error(file, "pooling without the prompt's tokens (`include_prompt: false`) is not supported yet"));
    }
    // Newer sentence-transformers write `pooling_mode` as a name (or a list of one);
    // the released checkpoints carry one boolean per mode.
    let named = match json.get("pooling_mode") {
        Some(Value::String(s)) => Some(s.clone()),
        Some(Value::Array(a)) if a.len() == 1 => a[0].as_str().map(str::to_string),
        _ => None,
    };
    let modes: Vec<&str> = match &named {
        Some(name) => vec![name.as_str()],
        None => [
            ("pooling_mode_mean_tokens", "mean"),
            ("pooling_mode_lasttoken", "lasttoken"),
            ("pooling_mode_cls_token", "cls"),
            ("pooling_mode_max_tokens", "max"),
            ("pooling_mode_mean_sqrt_len_tokens", "mean_sqrt_len_tokens"),
            ("pooling_mode_weightedmean_tokens", "weightedmean"),
        ]
        .into_iter()
        .filter(|(key, _)| flag(key))
        .map(|(_, mode)| mode)
        .collect(),
    };
    match modes.as_slice() {
        ["mean"] => Ok(Pooling::Mean),
        ["lasttoken"] => Ok(Pooling::LastToken),
        ["cls"] => Ok(Pooling::Cls),
        other => Err(format_error(file, format!("pooling {other:?} is not supported (one of mean, lasttoken, cls)"))),
    }
}

fn read_dense(folder: &Path, in_features: usize) -> Result<Dense> {
    let config_file = folder.join("config.json");
    let config = read_json(&config_file)?;
    let size = |key: &str| config.get(key).and_then(Value::as_u64).map(|n| n as usize);
    let (Some(inputs), Some(outputs)) = (size("in_features"), size("out_features")) else {
        return Err(format_error(&config_file, "a Dense module needs in_features and out_features"));
    };
    if inputs != in_features {
        return Err(format_error(&config_file, format!("this Dense layer takes {inputs} features but is given {in_features}")));
    }
    let activation = config.get("activation_function").and_then(Value::as_str).unwrap_or("torch.nn.modules.activation.Tanh");
    let tanh = match activation.rsplit('.').next() {
        Some("Identity") => false,
        Some("Tanh") => true,
        _ => return Err(format_error(&config_file, format!("activation `{activation}` is not supported (Identity or Tanh)"))),
    };
    let weights_file: PathBuf = folder.join("model.safetensors");
    if !weights_file.is_file() {
        return Err(format_error(folder, "a Dense module needs model.safetensors (pytorch_model.bin is not read)"));
    }
    crate::model::format::hf::validate_safetensors(&weights_file)?;
    let mut tensors = Array::load_safetensors(&weights_file)
        .map_err(|e| EngineError::CorruptWeights { path: weights_file.clone(), reason: e.to_string() })?;
    let weight = tensors
        .remove("linear.weight")
        .ok_or_else(|| EngineError::CorruptWeights { path: weights_file.clone(), reason: "no `linear.weight`".into() })?
        .as_dtype(Dtype::Float32)?;
    if weight.shape() != [outputs as i32, inputs as i32] {
        return Err(EngineError::WeightLayout(format!(
            "{}: linear.weight is {:?}, the config says [{outputs}, {inputs}]",
            weights_file.display(),
            weight.shape()
        )));
    }
    let bias = tensors.remove("linear.bias").map(|b| b.as_dtype(Dtype::Float32)).transpose()?;
    let wants_bias = config.get("bias").and_then(Value::as_bool).unwrap_or(true);
    if wants_bias != bias.is_some() {
        return Err(EngineError::WeightLayout(format!("{}: the config's `bias` and the weights disagree", weights_file.display())));
    }
    Ok(Dense { weight, bias, tanh })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pooling_reads_both_dialects_and_refuses_what_it_cannot_do() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("config.json");
        let write = |v: Value| std::fs::write(&file, v.to_string()).unwrap();
        write(serde_json::json!({"pooling_mode_lasttoken": true, "pooling_mode_mean_tokens": false}));
        assert_eq!(read_pooling(&file).unwrap(), Pooling::LastToken);
        write(serde_json::json!({"pooling_mode": "mean"}));
        assert_eq!(read_pooling(&file).unwrap(), Pooling::Mean);
        write(serde_json::json!({"pooling_mode_max_tokens": true}));
        assert!(read_pooling(&file).unwrap_err().to_string().contains("not supported"));
        write(serde_json::json!({"pooling_mode_mean_tokens": true, "include_prompt": false}));
        assert!(read_pooling(&file).unwrap_err().to_string().contains("include_prompt"));
    }
}
