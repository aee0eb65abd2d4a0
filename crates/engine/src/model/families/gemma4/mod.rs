//! Gemma 4: the text model (`text`), its vision and audio towers (`towers`), the processor that
//! prepares images, audio and prompts for them (`processor`), and the adapter that plugs both
//! into the runtime (`encoder`).

pub mod encoder;
pub mod processor;
pub mod text;
pub mod towers;

pub use encoder::Gemma4Encoder;
pub use text::build;
pub use towers::Gemma4Towers;
