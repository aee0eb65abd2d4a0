//! The engine's native side: the thread that owns every MLX array, the requests it serves.

pub mod context;
pub mod count;
pub mod engine;
pub mod generate;
pub mod media_encode;
pub mod media_prefill;
pub mod media_prompt;
pub mod model;
pub mod prepared;
pub mod request;
pub mod scheduler;

pub use count::TokenCounter;
pub use engine::{Engine, EngineOptions, Generation};
pub use model::{LoadProgress, ModelInfo, ReadyModel};
pub use request::{
    ContextPolicy, EncoderUse, Event, MediaPlan, ModelId, Plan, Prompt, PromptLookup, Request, Speculative, StopReason, Timings, Usage,
};
pub use scheduler::BatchOptions;
