//! Reading a GGUF's vocabulary: the `tokenizer.*` metadata, under llama.cpp's key names.
//!
//! The reading is kept apart from the building (`gguf_build.rs`) so that the builder can be
//! tested with small hand-made vocabularies, without MLX or a model file.

use std::path::Path;

use mlx_rs::io::GgufFile;
use mlx_rs::Array;

use super::tokenizer::Tokenizer;
use crate::error::{EngineError, Result};

/// llama.cpp's token types (`tokenizer.ggml.token_type`).
pub(crate) mod token_type {
    pub const UNKNOWN: i32 = 2;
    pub const CONTROL: i32 = 3;
    pub const USER_DEFINED: i32 = 4;
}

/// What a GGUF says about its tokenizer.
#[derive(Debug, Default, Clone)]
pub(crate) struct GgufVocab {
    /// `tokenizer.ggml.model`: `gpt2` (byte-level BPE), `llama` (SentencePiece-style BPE) or
    /// `gemma4` (BPE over characters with `▁` for spaces).
    pub model: String,
    /// `tokenizer.ggml.pre`: names the split applied before BPE (byte-level only).
    pub pre: Option<String>,
    pub tokens: Vec<String>,
    /// One per token; empty when the file has none (every token is then normal).
    pub token_types: Vec<i32>,
    /// One per token (SentencePiece vocabularies); higher merges first.
    pub scores: Vec<f32>,
    /// `"left right"`, best first (`gpt2` and `gemma4`).
    pub merges: Vec<String>,
    pub bos: Option<u32>,
    pub eos: Option<u32>,
    pub unk: Option<u32>,
    pub pad: Option<u32>,
    pub add_bos: Option<bool>,
    pub add_eos: Option<bool>,
    pub add_space_prefix: Option<bool>,
    pub chat_template: Option<String>,
}

impl Tokenizer {
    /// The tokenizer a GGUF file describes. `path` is the file's, for messages.
    pub fn from_gguf(gguf: &GgufFile, path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        GgufVocab::read(gguf, path)?.build(path)
    }
}

impl GgufVocab {
    pub fn read(gguf: &GgufFile, path: &Path) -> Result<Self> {
        let meta = Meta { gguf, path };
        let Some(model) = meta.string("tokenizer.ggml.model")? else {
            return Err(EngineError::MissingTokenizer { path: path.to_path_buf(), reason: "the GGUF has no tokenizer.ggml.model".into() });
        };
        let tokens = meta.strings("tokenizer.ggml.tokens")?.unwrap_or_default();
        if tokens.is_empty() {
            return Err(EngineError::MissingTokenizer { path: path.to_path_buf(), reason: "the GGUF has no tokenizer.ggml.tokens".into() });
        }
        let ints = meta.ints("tokenizer.ggml.token_type")?.unwrap_or_default();
        Ok(Self {
            model,
            pre: meta.string("tokenizer.ggml.pre")?,
            tokens,
            token_types: ints.into_iter().map(|t| t as i32).collect(),
            scores: meta.floats("tokenizer.ggml.scores")?.unwrap_or_default(),
            merges: meta.strings("tokenizer.ggml.merges")?.unwrap_or_default(),
            bos: meta.id("tokenizer.ggml.bos_token_id")?,
            eos: meta.id("tokenizer.ggml.eos_token_id")?,
            unk: meta.id("tokenizer.ggml.unknown_token_id")?,
            pad: meta.id("tokenizer.ggml.padding_token_id")?,
            add_bos: meta.flag("tokenizer.ggml.add_bos_token")?,
            add_eos: meta.flag("tokenizer.ggml.add_eos_token")?,
            add_space_prefix: meta.flag("tokenizer.ggml.add_space_prefix")?,
            chat_template: meta.string("tokenizer.chat_template")?,
        })
    }
}

/// Typed access to GGUF metadata, with errors that name the file and the key.
struct Meta<'a> {
    gguf: &'a GgufFile,
    path: &'a Path,
}

impl Meta<'_> {
    fn bad(&self, key: &str, why: impl std::fmt::Display) -> EngineError {
        EngineError::ModelFormat { path: self.path.to_path_buf(), reason: format!("metadata `{key}`: {why}") }
    }

    fn string(&self, key: &str) -> Result<Option<String>> {
        self.gguf.get_metadata_string(key).map_err(|e| self.bad(key, e))
    }

    fn strings(&self, key: &str) -> Result<Option<Vec<String>>> {
        self.gguf.get_metadata_strings(key).map_err(|e| self.bad(key, e))
    }

    fn array(&self, key: &str) -> Result<Option<Array>> {
        self.gguf.get_metadata_array(key).map_err(|e| self.bad(key, e))
    }

    fn ints(&self, key: &str) -> Result<Option<Vec<i64>>> {
        let Some(array) = self.array(key)? else {
            return Ok(None);
        };
        let array = array.as_type::<i64>().map_err(|e| self.bad(key, e.what()))?;
        Ok(Some(array.try_as_slice::<i64>().map_err(|e| self.bad(key, e))?.to_vec()))
    }

    fn floats(&self, key: &str) -> Result<Option<Vec<f32>>> {
        let Some(array) = self.array(key)? else {
            return Ok(None);
        };
        let array = array.as_type::<f32>().map_err(|e| self.bad(key, e.what()))?;
        Ok(Some(array.try_as_slice::<f32>().map_err(|e| self.bad(key, e))?.to_vec()))
    }

    fn scalar(&self, key: &str) -> Result<Option<i64>> {
        let Some(array) = self.array(key)? else {
            return Ok(None);
        };
        array.try_item_cast::<i64>().map(Some).map_err(|e| self.bad(key, e))
    }

    fn id(&self, key: &str) -> Result<Option<u32>> {
        // Some converters write -1 for "none".
        Ok(self.scalar(key)?.and_then(|v| u32::try_from(v).ok()))
    }

    fn flag(&self, key: &str) -> Result<Option<bool>> {
        Ok(self.scalar(key)?.map(|v| v != 0))
    }
}
