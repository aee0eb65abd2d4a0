//! Text in and out of a model: tokenizers, chat templates, streaming detokenization, stop strings.
//!
//! - [`Tokenizer`]: from a Hugging Face folder (`tokenizer.json`) or built from a GGUF's
//!   vocabulary the way llama.cpp reads it; knows BOS/EOS, the special ids and the chat template.

mod gguf_build;
mod gguf_pre;
mod gguf_vocab;
mod hf_folder;
mod tokenizer;

pub use tokenizer::Tokenizer;
