//! Checkpoint formats: a Hugging Face folder of safetensors, or one GGUF file.

pub mod gguf;
pub mod gguf_header;
pub mod hf;

use std::path::Path;

use crate::error::{EngineError, Result};

/// Which reader a path needs, decided from what is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
pub enum Format {
    Safetensors,
    Gguf,
}

impl Format {
    pub fn detect(path: &Path) -> Result<Self> {
        if path.is_file() && path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) {
            return Ok(Format::Gguf);
        }
        if path.is_dir() {
            if path.join("config.json").is_file() {
                return Ok(Format::Safetensors);
            }
            return Err(EngineError::ModelFormat { path: path.into(), reason: "the folder has no config.json".into() });
        }
        let reason = if path.exists() { "not a model folder or .gguf file" } else { "no such file or folder" };
        Err(EngineError::ModelFormat { path: path.into(), reason: reason.into() })
    }
}

/// A stable identity for caches: 64-bit FNV-1a over what defines the model's behaviour.
#[derive(Default)]
pub struct Fingerprint(u64);

impl Fingerprint {
    pub fn new() -> Self {
        Self(0xcbf2_9ce4_8422_2325)
    }
    pub fn add(&mut self, bytes: &[u8]) -> &mut Self {
        for &b in bytes.iter().chain(&[0xff]) {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01b3);
        }
        self
    }
    pub fn finish(&self) -> String {
        format!("{:016x}", self.0)
    }
}
