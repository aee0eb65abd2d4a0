//! One file per architecture family. Adding one: a file here and a line in `registry.rs`.

pub mod gemma3;
pub mod gemma4;
pub mod llama;
