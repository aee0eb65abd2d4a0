//! The engine's native side: the MLX runtime it runs on.

pub mod device;
