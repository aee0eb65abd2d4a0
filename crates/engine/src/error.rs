//! The engine's one error type. Every message says what went wrong and what to do about it,
//! because the app shows it to a person as it is.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: {reason}. Pick a model folder with config.json and *.safetensors, or a .gguf file.")]
    ModelFormat { path: PathBuf, reason: String },

    #[error("{path}: architecture `{arch}` is not supported. Supported: {supported}.")]
    UnknownArchitecture { path: PathBuf, arch: String, supported: String },

    #[error("{path}: the weights are incomplete or corrupt ({reason}). Download the model again.")]
    CorruptWeights { path: PathBuf, reason: String },

    #[error("{path}: no tokenizer found ({reason}). The folder needs tokenizer.json, or use a GGUF file that carries its vocabulary.")]
    MissingTokenizer { path: PathBuf, reason: String },

    #[error("tokenizer: {0}")]
    Tokenizer(String),

    #[error("chat template: {0}. Edit the template or pick another model.")]
    Template(String),

    #[error("the prompt is {prompt} tokens but the model's context is {context}. Shorten the conversation or start a new one.")]
    ContextOverflow { prompt: usize, context: usize },

    #[error("invalid setting `{name}`: {reason}")]
    InvalidSetting { name: &'static str, reason: String },

    #[error("the engine has stopped; restart Confab")]
    EngineStopped,

    #[error("MLX: {0}")]
    Mlx(String),

    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl From<mlx_rs::error::Exception> for EngineError {
    fn from(e: mlx_rs::error::Exception) -> Self {
        EngineError::Mlx(e.what().to_string())
    }
}

impl EngineError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EngineError::Io { path: path.into(), source }
    }

    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        EngineError::InvalidSetting { name, reason: reason.into() }
    }
}
