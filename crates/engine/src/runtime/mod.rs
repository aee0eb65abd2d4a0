//! The engine's native side: the thread that owns every MLX array, the requests it serves.

pub mod device;
pub mod engine;
pub mod generate;
pub mod model;
pub mod request;

pub use engine::{Engine, EngineOptions, Generation};
pub use model::{LoadProgress, ModelInfo, ReadyModel};
pub use request::{Event, ModelId, Plan, Prompt, Request, StopReason, Timings, Usage};
