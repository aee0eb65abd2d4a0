//! confab-engine: from model files on disk to streamed tokens, on MLX.
//!
//! This crate knows nothing of Tauri or SQLite; the CLI and the app are its clients.

pub mod blas;
pub mod cache;
pub mod constraint;
pub mod cpu_threads;
pub mod defaults;
pub mod device;
pub mod error;
/// Attachments decoded and checked: the media crate, under the engine's name for it.
pub use confab_media as media;
pub mod model;
pub mod npy;
pub mod runtime;
pub mod sample;
pub mod state;
pub mod text;

pub use constraint::Constraint;
pub use device::{MlxRuntime, RuntimeError};
pub use error::{EngineError, MediaProblem, MemoryShortfall, Remedy, Result};
pub use media::{MediaInfo, MediaKind, MediaLimits};
pub use text::{ChatMessage, ChatTemplate, StopMatcher, StopStep, StreamDecoder, Tokenizer};

// The API of the front doors (the chat-turn layer, the app, the server, the CLI): they import
// these names from the crate's root, never a module's path (tests/setup/test_architecture.py;
// the CLI's doctor and benchmarks look deeper), so this list is what the engine shows them.
pub use blas::run_on_the_right_blas_core;
pub use cache::{EncoderOptions, PrefixOptions};
pub use device::physical_memory;
pub use media::MediaItem;
pub use model::discover::{discover, display_name, has_gguf_name, is_model_folder, ModelSummary};
pub use model::embedding::EmbedPrompt;
pub use model::family::media_reads;
pub use model::memory::{fits_in_memory, memory_for_models, memory_needed};
pub use model::ollama::is_store as is_ollama_store;
pub use model::registry::{defaults as config_defaults, supported as supported_architectures};
pub use model::runs_here::{runs_here, Architecture};
pub use model::{DtypeChoice, LoadOptions, TextConfig};
pub use runtime::context::{prompt_budget, room_for_reply};
pub use runtime::generate::draft_vocabulary_mismatch;
pub use runtime::{
    BatchOptions, CanvasUpdate, ContextPolicy, Engine, EngineOptions, Event, Generation, LoadProgress, MemoryBudget, ModelId, ModelInfo,
    Plan, Prompt, PromptLookup, QueueReason, Request, Speculative, SpeculativeStats, StopReason, Timings, TokenCounter, Usage,
    DEFAULT_MAX_DRAFT, MTP_MAX_DRAFT,
};
pub use sample::{SamplingChoices, SamplingParams};
pub use state::KvQuantization;
pub use text::{ChatOptions, ReplyFormat, ReplyParser, ReplyPart, ToolCall};
