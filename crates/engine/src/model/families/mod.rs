//! One folder per model family: its config arguments, its text model, the layers only it uses
//! and, where it reads images or audio, its towers, processor and encoder adapter. Adding one:
//! a folder here and a line in `registry.rs`.

pub mod diffusion_gemma;
pub mod gemma3;
pub mod gemma4;
pub mod gpt_oss;
pub mod lfm2;
pub mod llama;
pub mod mistral3;
pub mod qwen3_5;
pub mod qwen3_vl;
pub mod smollm3;
