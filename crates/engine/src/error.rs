//! The engine's one error type. Every message says what went wrong and what to do about it,
//! in words of its own floor: what to change is a [`Remedy`], a fact that each front door (the
//! app, `confab serve`, the CLI) names in its own words (`EngineError::describe`), where the
//! engine's `Display` says it neutrally, never naming a pane, a flag or a route.

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
    #[error("{}", internal(.0, &Remedy::ReportBug.to_string()))]
    Internal(String),

    /// A request that could not run even alone within the memory budget for running requests.
    #[error("{}", .0.describe(&|remedy| remedy.to_string()))]
    NeverFits(MemoryShortfall),

    /// Speculative decoding with a draft model was asked for, and none is loaded beside the model.
    #[error("draft_model needs a draft model loaded beside the model; {}", Remedy::LoadDraftModel)]
    NoDraftModel,

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

/// What a person can change so that a refused request runs. `Display` says it in neutral
/// words; the app names the pane that changes it, `confab serve` and the CLI their flags.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Remedy {
    /// Allow the reply fewer tokens.
    LowerMaxTokens,
    /// Hold keys and values quantized, at `bits`; `None`: at 8 or 4 bits.
    QuantizeKeysValues { bits: Option<u8> },
    /// Give running requests more memory.
    RaiseMemoryBudget,
    /// Load a draft model beside the model, for speculative decoding.
    LoadDraftModel,
    /// A bug: report it with the diagnostics.
    ReportBug,
}

impl std::fmt::Display for Remedy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Remedy::LowerMaxTokens => f.write_str("lower the reply's token limit"),
            Remedy::QuantizeKeysValues { bits: None } => f.write_str("hold keys and values at 8 or 4 bits"),
            Remedy::QuantizeKeysValues { bits: Some(bits) } => write!(f, "hold keys and values at {bits} bits"),
            Remedy::RaiseMemoryBudget => f.write_str("raise the memory budget"),
            Remedy::LoadDraftModel => f.write_str("load one beside it"),
            Remedy::ReportBug => f.write_str("report it with the diagnostics"),
        }
    }
}

/// What a request that could never run within the budget would need.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoryShortfall {
    /// Its keys and values (and the model's fixed state) at `positions`, in bytes.
    pub state_bytes: usize,
    /// The activations of reading its prompt, in bytes.
    pub activation_bytes: usize,
    pub positions: usize,
    /// The budget for running requests, in bytes.
    pub budget_bytes: usize,
    /// The bits the model holds keys and values at; `None`: full precision.
    pub kv_bits: Option<u8>,
    /// The request set a token limit for its reply (without one, only its prompt and a first
    /// step of its reply are counted, so a lower limit would not help).
    pub reply_limited: bool,
}

impl MemoryShortfall {
    /// What would let it run, in the order to try them.
    pub fn remedies(&self) -> Vec<Remedy> {
        let fewer_bits = match self.kv_bits {
            None => Some(Remedy::QuantizeKeysValues { bits: None }),
            Some(8) => Some(Remedy::QuantizeKeysValues { bits: Some(4) }),
            Some(_) => None,
        };
        let lower_limit = self.reply_limited.then_some(Remedy::LowerMaxTokens);
        [lower_limit, fewer_bits, Some(Remedy::RaiseMemoryBudget)].into_iter().flatten().collect()
    }

    /// The refusal, each remedy in `words`.
    pub fn describe(&self, words: &dyn Fn(Remedy) -> String) -> String {
        let mb = |bytes: usize| format!("{:.0} MB", bytes as f64 / 1e6);
        let fewer_bits: String = self
            .remedies()
            .into_iter()
            .filter(|r| matches!(r, Remedy::QuantizeKeysValues { .. }))
            .map(|r| format!(", {}", words(r)))
            .collect();
        format!(
            "this request may need {} of memory ({} of keys and values for {} positions, {} for reading the prompt), more than the {} budget for running requests; {}shorten the prompt{fewer_bits}, or {}",
            mb(self.state_bytes + self.activation_bytes),
            mb(self.state_bytes),
            self.positions,
            mb(self.activation_bytes),
            mb(self.budget_bytes),
            if self.reply_limited { format!("{} or ", words(Remedy::LowerMaxTokens)) } else { String::new() },
            words(Remedy::RaiseMemoryBudget),
        )
    }
}

/// An internal error's message, with `report` saying how to report it.
pub fn internal(detail: &str, report: &str) -> String {
    format!("internal error: {detail}. This is a bug in Confab; please {report}.")
}

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
    /// The message, each [`Remedy`] in a front door's `words` (its panes, its flags); the
    /// same as `to_string` for errors without one.
    pub fn describe(&self, words: &dyn Fn(Remedy) -> String) -> String {
        match self {
            EngineError::Internal(detail) => internal(detail, &words(Remedy::ReportBug)),
            EngineError::NeverFits(shortfall) => shortfall.describe(words),
            EngineError::NoDraftModel => {
                format!("draft_model needs a draft model loaded beside the model; {}", words(Remedy::LoadDraftModel))
            }
            other => other.to_string(),
        }
    }

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
