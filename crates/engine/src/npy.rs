//! The .npy format for float32 vectors: how logits are saved and how reference logits are read.

use std::path::Path;

use crate::error::{EngineError, Result};

pub fn write_f32(path: &Path, values: &[f32], shape: &[usize]) -> Result<()> {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape = if dims.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': {shape}, }}");
    // Magic (6) + version (2) + length (2) + header + newline, padded to 64 bytes.
    let padding = 64 - (10 + header.len() + 1) % 64;
    header.push_str(&" ".repeat(padding % 64));
    header.push('\n');
    let mut bytes = Vec::with_capacity(10 + header.len() + values.len() * 4);
    bytes.extend_from_slice(b"\x93NUMPY\x01\x00");
    bytes.extend_from_slice(&(header.len() as u16).to_le_bytes());
    bytes.extend_from_slice(header.as_bytes());
    values.iter().for_each(|v| bytes.extend_from_slice(&v.to_le_bytes()));
    std::fs::write(path, bytes).map_err(|e| EngineError::io(path, e))
}

/// Reads a little-endian float32 .npy (any shape) as a flat vector.
pub fn read_f32(path: &Path) -> Result<Vec<f32>> {
    let bytes = std::fs::read(path).map_err(|e| EngineError::io(path, e))?;
    let bad = |reason: &str| EngineError::ModelFormat { path: path.into(), reason: reason.into() };
    if bytes.len() < 10 || &bytes[..6] != b"\x93NUMPY" {
        return Err(bad("not a .npy file"));
    }
    let (len_bytes, start) = if bytes[6] == 1 { (2, 10) } else { (4, 12) };
    let header_len = bytes[8..8 + len_bytes].iter().rev().fold(0usize, |n, b| n << 8 | *b as usize);
    let header = std::str::from_utf8(&bytes[start..start + header_len]).map_err(|_| bad("bad header"))?;
    if !header.contains("'<f4'") {
        return Err(bad("only little-endian float32 .npy files are read"));
    }
    Ok(bytes[start + header_len..].chunks_exact(4).map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}
