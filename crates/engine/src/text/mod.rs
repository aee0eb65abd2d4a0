//! Text in and out of a model: tokenizers, chat templates, streaming detokenization, stop strings.
//!
//! - [`Tokenizer`]: from a Hugging Face folder (`tokenizer.json`) or built from a GGUF's
//!   vocabulary the way llama.cpp reads it; knows BOS/EOS, the special ids and the chat template.
//! - [`ChatTemplate`]: renders a conversation with the model's Jinja template as transformers does.
//! - [`StreamDecoder`]: token ids one at a time in, text deltas out, never a broken character.
//! - [`StopMatcher`]: holds back text that may become a stop string; the stop string never shows.

mod detokenizer;
mod gguf_build;
mod gguf_pre;
mod gguf_vocab;
mod hf_folder;
mod prompt_memo;
mod pyjson;
mod stop;
mod strftime;
mod template;
mod tokenizer;

pub use detokenizer::StreamDecoder;
pub use stop::{StopMatcher, StopStep};
pub use template::{ChatMessage, ChatTemplate, PromptEnd};
pub use tokenizer::Tokenizer;
