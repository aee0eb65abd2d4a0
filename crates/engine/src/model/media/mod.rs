//! A model's side of media, before the runtime runs it: the processor that turns a decoded image,
//! clip or video (`confab-media`) into a tower's input and its prompt's placeholder tokens
//! (`processor`, each family's in its folder), the prompt with those placeholders expanded
//! (`expanded_prompt`), and reading a family's towers from its checkpoint (`towers`).
//! The runtime's stages follow in `runtime::media`.

pub mod expanded_prompt;
pub mod processor;
pub mod towers;

pub use processor::MediaProcessor;
