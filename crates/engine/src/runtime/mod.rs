//! The engine's native side: the thread that owns every MLX array, the requests it serves.

pub mod budget;
pub mod context;
pub mod count;
pub mod embed;
pub mod engine;
pub mod generate;
pub mod media;
pub mod ready_model;
pub mod request;
pub mod scheduler;
pub mod tokenized_prompt;

pub use budget::MemoryBudget;
pub use count::TokenCounter;
pub use embed::Embeddings;
pub use engine::{Engine, EngineOptions, Generation};
pub use ready_model::{LoadProgress, ModelInfo, ReadyModel};
pub use request::{
    CanvasPiece, CanvasUpdate, ContextPolicy, DenoisingNoise, EncoderUse, Event, MediaPlan, ModelId, Plan, Prompt, PromptLookup,
    QueueReason, Request, Speculative, SpeculativeStats, StopReason, Timings, Usage, DEFAULT_MAX_DRAFT, MTP_MAX_DRAFT,
};
pub use scheduler::BatchOptions;
