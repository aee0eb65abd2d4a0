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
