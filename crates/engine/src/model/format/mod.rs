//! Checkpoint formats: a Hugging Face folder of safetensors, or one GGUF file.

pub mod gguf;
mod gguf_arch;
mod gguf_blocks;
pub mod gguf_header;
mod gguf_meta;
pub mod hf;

use std::path::Path;

use crate::error::{EngineError, Result};

/// Which reader a path needs, decided from what is on disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub enum Format {
    Safetensors,
    Gguf,
}

impl Format {
    pub fn detect(path: &Path) -> Result<Self> {
        // By its name, or by its first bytes where it has no `.gguf` name (a blob of Ollama's).
        if path.is_file() && (path.extension().is_some_and(|e| e.eq_ignore_ascii_case("gguf")) || gguf_header::has_magic(path)) {
            return Ok(Format::Gguf);
        }
        if path.is_dir() {
            if path.join("config.json").is_file() {
                return Ok(Format::Safetensors);
            }
            return Err(EngineError::ModelFormat { path: path.into(), reason: "the folder has no config.json".into() });
        }
        let reason = if path.exists() { "not a model folder or GGUF file" } else { "no such file or folder" };
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
    /// Adds samples of a weights file's bytes (and its length): two checkpoints with the same
    /// config and tensor shapes (fine-tunes of one base, random test checkpoints) differ in
    /// every tensor, so a few evenly spaced pieces tell them apart without reading gigabytes.
    /// Without them they shared one identity, and so each other's cached prefixes and tower
    /// outputs, on disk too.
    pub fn add_file_samples(&mut self, path: &Path) -> Result<&mut Self> {
        use std::io::{Read, Seek, SeekFrom};
        const SAMPLES: u64 = 16;
        const SAMPLE_BYTES: usize = 4096;
        let mut file = std::fs::File::open(path).map_err(|e| EngineError::io(path, e))?;
        let len = file.metadata().map_err(|e| EngineError::io(path, e))?.len();
        self.add(&len.to_le_bytes());
        let mut sample = vec![0u8; SAMPLE_BYTES];
        for i in 0..SAMPLES {
            let at = (len.saturating_sub(SAMPLE_BYTES as u64)) * i / (SAMPLES - 1);
            file.seek(SeekFrom::Start(at)).map_err(|e| EngineError::io(path, e))?;
            let n = file.read(&mut sample).map_err(|e| EngineError::io(path, e))?;
            self.add(&sample[..n]);
        }
        Ok(self)
    }

    pub fn finish(&self) -> String {
        format!("{:016x}", self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint_of(bytes: &[u8]) -> String {
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("confab-fingerprint-{}-{n}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        let found = Fingerprint::new().add_file_samples(&path).unwrap().finish();
        std::fs::remove_file(&path).unwrap();
        found
    }

    #[test]
    fn weights_with_other_values_have_another_identity() {
        // Two "checkpoints" of one shape whose values differ throughout, as two fine-tunes do.
        let a: Vec<u8> = (0..1_000_000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let b: Vec<u8> = (0..1_000_000u32).map(|i| (i.wrapping_mul(2_246_822_519) >> 11) as u8).collect();
        assert_eq!(fingerprint_of(&a), fingerprint_of(&a));
        assert_ne!(fingerprint_of(&a), fingerprint_of(&b));
        // Shorter than one sample: read whole.
        assert_ne!(fingerprint_of(&a[..100]), fingerprint_of(&b[..100]));
        assert!(Fingerprint::new().add_file_samples(Path::new("/nonexistent/confab")).is_err());
    }
}
