//! Tensor types MLX's GGUF loader does not read (it leaves MXFP4 out without a word), read here
//! from the file's blocks.
//!
//! MXFP4 (ggml's block of 32: one e8m0 scale byte, then 16 bytes whose low nibbles are elements
//! 0–15 and high nibbles elements 16–31, each an e2m1 value): the experts of a mixture (`*_exps`,
//! as llama.cpp's MXFP4_MOE files store them) stay packed, their nibbles moved into MLX's `mxfp4`
//! layout (element 2k in byte k's low nibble, eight to a little-endian word; the scales as they are),
//! the same bytes OpenAI's safetensors hold. Any other MXFP4 tensor is widened once to float32
//! (exactly: every value is an e2m1 times a power of two), as no other layer reads `mxfp4`.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use mlx_rs::{Array, Dtype};

use super::gguf_header::TensorInfo;
use crate::error::{EngineError, Result};

/// ggml's type number for MXFP4.
pub(super) const MXFP4: u32 = 39;

/// The types read here, not by MLX.
pub(super) const TYPES: &[u32] = &[MXFP4];

const MXFP4_BLOCK: u64 = 32;
const MXFP4_BLOCK_BYTES: u64 = 17;

/// e2m1's sixteen values (sign, two exponent bits, one mantissa bit).
const E2M1: [f32; 16] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

/// Reads `info` (of a type in [`TYPES`]) from `path`: its arrays, under the suffixes that replace
/// its name's `weight` (`weight` and `scales` when it stays packed).
pub(super) fn read(path: &Path, info: &TensorInfo) -> Result<Vec<(&'static str, Array)>> {
    let corrupt = |reason: String| EngineError::CorruptWeights { path: path.into(), reason };
    let row = info.dims.first().copied().unwrap_or(0);
    if info.ggml_type != MXFP4 || row == 0 || row % MXFP4_BLOCK != 0 {
        return Err(corrupt(format!("`{}`: rows of {row} do not fill MXFP4 blocks of {MXFP4_BLOCK}", info.name)));
    }
    let blocks = info.elements() / MXFP4_BLOCK;
    let bytes = read_bytes(path, info.offset, blocks * MXFP4_BLOCK_BYTES).map_err(|e| corrupt(format!("`{}`: {e}", info.name)))?;
    // MLX's order: the slowest dimension first.
    let shape: Vec<i32> = info.dims.iter().rev().map(|&d| d as i32).collect();
    let (outer, last) = shape.split_at(shape.len() - 1);
    if info.name.contains("_exps.") {
        let (packed, scales) = mxfp4_to_mlx(&bytes);
        let byte_shape: Vec<i32> = outer.iter().copied().chain([last[0] / 2]).collect();
        let scale_shape: Vec<i32> = outer.iter().copied().chain([last[0] / MXFP4_BLOCK as i32]).collect();
        let weight = Array::from_slice(&packed, &byte_shape).view_dtype(Dtype::Uint32)?;
        return Ok(vec![("weight", weight), ("scales", Array::from_slice(&scales, &scale_shape))]);
    }
    Ok(vec![("weight", Array::from_slice(&mxfp4_to_f32(&bytes), &shape))])
}

fn read_bytes(path: &Path, offset: u64, len: u64) -> std::io::Result<Vec<u8>> {
    let mut file = File::open(path)?;
    if offset.saturating_add(len) > file.metadata()?.len() {
        return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "its blocks run past the end of the file"));
    }
    file.seek(SeekFrom::Start(offset))?;
    let mut bytes = vec![0u8; len as usize];
    file.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// ggml's MXFP4 blocks → MLX's `mxfp4` nibbles (16 bytes a block) and e8m0 scales (one a block).
fn mxfp4_to_mlx(blocks: &[u8]) -> (Vec<u8>, Vec<u8>) {
    let n = blocks.len() / MXFP4_BLOCK_BYTES as usize;
    let (mut packed, mut scales) = (Vec::with_capacity(n * 16), Vec::with_capacity(n));
    for block in blocks.chunks_exact(MXFP4_BLOCK_BYTES as usize) {
        scales.push(block[0]);
        let element = |i: usize| if i < 16 { block[1 + i] & 0x0f } else { block[1 + i - 16] >> 4 };
        packed.extend((0..16).map(|k| element(2 * k) | (element(2 * k + 1) << 4)));
    }
    (packed, scales)
}

/// ggml's MXFP4 blocks → float32, exactly.
fn mxfp4_to_f32(blocks: &[u8]) -> Vec<f32> {
    let mut out = Vec::with_capacity(blocks.len() / MXFP4_BLOCK_BYTES as usize * MXFP4_BLOCK as usize);
    for block in blocks.chunks_exact(MXFP4_BLOCK_BYTES as usize) {
        let scale = e8m0(block[0]);
        out.extend(block[1..].iter().map(|&q| E2M1[(q & 0x0f) as usize] * scale));
        out.extend(block[1..].iter().map(|&q| E2M1[(q >> 4) as usize] * scale));
    }
    out
}

/// 2^(e − 127); e = 0 is the subnormal 2^-127 (255, e8m0's NaN, reads as infinity).
fn e8m0(e: u8) -> f32 {
    if e == 0 {
        f32::from_bits(1 << 22)
    } else {
        f32::from_bits((e as u32) << 23)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One block of elements 0..32 as nibbles i % 16, scale 2^0: ggml's layout in, MLX's out.
    #[test]
    fn mxfp4_blocks_move_their_nibbles_into_mlx_order() {
        let elements: Vec<u8> = (0..32).map(|i| (i % 16) as u8).collect();
        let mut block = vec![127u8];
        block.extend((0..16).map(|j| elements[j] | (elements[j + 16] << 4)));
        let (packed, scales) = mxfp4_to_mlx(&block);
        assert_eq!(scales, [127]);
        let back: Vec<u8> = packed.iter().flat_map(|&b| [b & 0x0f, b >> 4]).collect();
        assert_eq!(back, elements);
        let values = mxfp4_to_f32(&block);
        assert_eq!(values[..8], [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]);
        assert_eq!(values[16 + 15], -6.0);
        assert_eq!(e8m0(128), 2.0);
        assert_eq!(e8m0(0), 2f32.powi(-127));
    }
}
