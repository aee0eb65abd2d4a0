//! The engine's native side: the thread that owns every MLX array, the requests it serves.

pub mod blas;
pub mod device;
pub mod engine;
pub mod generate;
pub mod media_encode;
pub mod media_prefill;
pub mod media_processor;
pub mod media_prompt;
pub mod model;
pub mod request;
pub mod scheduler;

pub use engine::{Engine, EngineOptions, Generation};
pub use scheduler::BatchOptions;
pub use model::{LoadProgress, ModelInfo, ReadyModel};
pub use media_processor::MediaProcessor;
pub use request::{EncoderUse, Event, MediaPlan, ModelId, Plan, Prompt, Request, StopReason, Timings, Usage};
