//! The engine's one error type. Every message says what went wrong and what to do about it,
//! because the app shows it to a person as it is.

use std::path::PathBuf;

pub use confab_media::{MediaError, MediaKind, MediaProblem};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("{path}: {reason}. Pick a model folder with config.json and *.safetensors, or a .gguf file.")]
    ModelFormat { path: PathBuf, reason: String },

    #[error("{path}: architecture `{arch}` is not supported. Supported: {supported}.")]
    UnknownArchitecture { path: PathBuf, arch: String, supported: String },

    #[error("{path}: the weights are incomplete or corrupt ({reason}). Download the model again.")]
    CorruptWeights { path: PathBuf, reason: String },

    #[error("{path}: its weights are stored as {types}, which Confab does not read yet (it reads {readable}). Pick a Q4_K_M, Q6_K, Q8_0 or Q4_0 file of the same model.")]
    UnsupportedQuantization { path: PathBuf, types: String, readable: String },

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

    /// An MLX operation failed (out of memory, a shape MLX refused).
    #[error("MLX: {0}")]
    Mlx(String),

    /// The weights do not have the shapes or parts the architecture needs.
    #[error("the model's weights are not laid out as its architecture expects ({0}). Download the model again or pick another.")]
    WeightLayout(String),

    /// Something the engine guarantees did not hold: a bug, never the person's doing.
    #[error(
        "internal error: {0}. This is a bug in Confab; please report it with the diagnostics (`confab doctor`; in the app, Settings › Advanced › About › Copy diagnostics)."
    )]
    Internal(String),

    #[error("{path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },

    /// A constrained reply could not go on: its grammar allows no token where the reply stands.
    #[error("constrained decoding: {0}. Loosen the schema or grammar and try again.")]
    Constraint(String),

    /// A draft model for speculative decoding whose token ids mean other tokens than the model's.
    #[error("{draft} cannot draft for {model}: its vocabulary differs ({mismatch}). Pick a draft that shares the model's tokenizer, such as a smaller model of the same family.")]
    DraftVocabulary { draft: PathBuf, model: PathBuf, mismatch: String },

    /// An attached image or audio clip Confab cannot use; `file` is its name as the person
    /// knows it.
    #[error("{file}: {problem}")]
    Media { file: String, problem: MediaProblem },

    /// An image, clip or video sent to a model without the tower (or processor) that reads it.
    #[error("{}", cannot_read(.model, *.kind, *.vision, *.audio, *.video))]
    ModelCannotRead { model: String, kind: MediaKind, vision: bool, audio: bool, video: bool },
}

pub type Result<T, E = EngineError> = std::result::Result<T, E>;

impl From<mlx_rs::error::Exception> for EngineError {
    fn from(e: mlx_rs::error::Exception) -> Self {
        EngineError::Mlx(e.what().to_string())
    }
}

/// The media crate's errors, as the engine's: the same variants, the same messages.
impl From<MediaError> for EngineError {
    fn from(e: MediaError) -> Self {
        match e {
            MediaError::Media { file, problem } => EngineError::Media { file, problem },
            MediaError::Io { path, source } => EngineError::Io { path, source },
            MediaError::InvalidSetting { name, reason } => EngineError::InvalidSetting { name, reason },
            MediaError::Internal(detail) => EngineError::Internal(detail),
            MediaError::Stopped => EngineError::EngineStopped,
        }
    }
}

impl EngineError {
    pub fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        EngineError::Io { path: path.into(), source }
    }

    pub fn media(file: impl Into<String>, problem: MediaProblem) -> Self {
        EngineError::Media { file: file.into(), problem }
    }

    pub fn invalid(name: &'static str, reason: impl Into<String>) -> Self {
        EngineError::InvalidSetting { name, reason: reason.into() }
    }
}

fn cannot_read(model: &str, kind: MediaKind, vision: bool, audio: bool, video: bool) -> String {
    let read: Vec<&str> = [(true, "text"), (vision, "images"), (audio, "audio"), (video, "video")]
        .into_iter()
        .filter_map(|(yes, what)| yes.then_some(what))
        .collect();
    let reads = match read.as_slice() {
        [only] => format!("{only} only"),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
        [] => unreachable!("text is always read"),
    };
    let (capability, items, example) = match kind {
        MediaKind::Image => ("vision", "images", "Gemma 4"),
        MediaKind::Audio => ("audio", "audio clips", "Gemma 4"),
        MediaKind::Video => ("video", "videos", "Qwen3-VL"),
    };
    format!("this model ({model}) reads {reads}; load a model with {capability} (e.g. {example}) to send {items}")
}
