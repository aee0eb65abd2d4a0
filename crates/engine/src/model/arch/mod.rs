//! One file per architecture family. Adding one: a file here and a line in `registry.rs`.

pub mod llama;
