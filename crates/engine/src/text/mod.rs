//! Text in and out of a model: tokenizers, chat templates, streaming detokenization, stop strings.
//!
//! - [`Tokenizer`]: from a Hugging Face folder (`tokenizer.json`) or built from a GGUF's
//!   vocabulary the way llama.cpp reads it; knows BOS/EOS, the special ids and the chat template.
//! - [`ChatTemplate`]: renders a conversation with the model's Jinja template as transformers does.
//! - [`StreamDecoder`]: token ids one at a time in, text deltas out, never a broken character.
//! - [`StopMatcher`]: holds back text that may become a stop string; the stop string never shows.
//! - [`ReplyParser`]: a streamed reply split into reasoning, answer and tool calls, in the
//!   markup the model's template implies ([`ReplyFormat`]); each format of calls is one file
//!   in `call_formats` (its markup, its grammar, its parser); `tools` writes tools into the
//!   messages for templates that do not render them.

mod call_formats;
mod detokenizer;
mod gguf_build;
pub(crate) use gguf_build::VOCABULARY_TYPES as GGUF_VOCABULARY_TYPES;
mod gguf_pre;
mod gguf_vocab;
mod hf_folder;
mod parts;
mod prompt_memo;
mod pyjson;
#[cfg(test)]
mod real_templates;
mod reply;
mod stop;
mod strftime;
mod template;
mod tokenizer;
pub mod tools;

pub use detokenizer::StreamDecoder;
pub use reply::{Markers, ParsedCall, ReplyFormat, ReplyParser, ReplyPart, ToolSyntax};
pub use stop::{StopMatcher, StopStep};
pub(crate) use strftime::civil_from_days;
pub use template::{ChatMessage, ChatOptions, ChatTemplate, PromptEnd, ToolCall};
pub use tokenizer::Tokenizer;
