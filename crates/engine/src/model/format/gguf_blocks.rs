//! Tensor types MLX's GGUF loader does not read (it fails on Q5_0, Q5_1, Q3_K and Q5_K, and leaves
//! MXFP4 out without a word), read here from the file's blocks. A file with a type MLX fails on is
//! read here whole (`super::gguf` gives MLX its metadata alone), so this reader also reads every
//! type MLX does, as MLX does: F32, F16, BF16; Q4_0, Q4_1 and Q8_0 kept packed as MLX's affine
//! groups of 32 (scale `d`, bias `-8d`, `m` or `-128d`, in float16); Q2_K, Q4_K and Q6_K widened to
//! float16.
//!
//! Q5_0, Q5_1, Q3_K and Q5_K are widened once at load, to float16, as MLX's loader widens Q4_K and
//! Q6_K: none is an affine group our kernels read (5- and 3-bit values; the K-quants' sub-block scales
//! `d · sc` are exact in float32 but not in the float16 scales a packed weight carries). The decoders
//! give gguf's (and ggml's) float32 values bit for bit, in its order of operations.
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

/// ggml's type numbers.
const F32: u32 = 0;
const F16: u32 = 1;
const Q4_0: u32 = 2;
const Q4_1: u32 = 3;
const Q5_0: u32 = 6;
const Q5_1: u32 = 7;
const Q8_0: u32 = 8;
const Q2_K: u32 = 10;
const Q3_K: u32 = 11;
const Q4_K: u32 = 12;
const Q5_K: u32 = 13;
const Q6_K: u32 = 14;
const BF16: u32 = 30;
const MXFP4: u32 = 39;

/// The types read here.
pub(super) const TYPES: &[u32] = &[F32, F16, BF16, Q4_0, Q4_1, Q8_0, Q5_0, Q5_1, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, MXFP4];

/// Values a block and its bytes, per type.
fn block_size(ggml_type: u32) -> (u64, u64) {
    match ggml_type {
        F32 => (1, 4),
        F16 | BF16 => (1, 2),
        Q4_0 => (32, 18),
        Q4_1 => (32, 20),
        Q8_0 => (32, 34),
        Q5_0 => (32, 22),
        Q5_1 => (32, 24),
        Q2_K => (256, 84),
        Q3_K => (256, 110),
        Q4_K => (256, 144),
        Q5_K => (256, 176),
        Q6_K => (256, 210),
        _ => (MXFP4_BLOCK, MXFP4_BLOCK_BYTES),
    }
}

const MXFP4_BLOCK: u64 = 32;
const MXFP4_BLOCK_BYTES: u64 = 17;

/// e2m1's sixteen values (sign, two exponent bits, one mantissa bit).
const E2M1: [f32; 16] = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0, -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0];

/// Reads `info` (of a type in [`TYPES`]) from `path`: its arrays, under the suffixes that replace
/// its name's `weight` (`weight` and `scales` when it stays packed).
pub(super) fn read(path: &Path, info: &TensorInfo) -> Result<Vec<(&'static str, Array)>> {
    let corrupt = |reason: String| EngineError::CorruptWeights { path: path.into(), reason };
    let row = info.dims.first().copied().unwrap_or(0);
    let (block, block_bytes) = block_size(info.ggml_type);
    let type_name = super::gguf_header::ggml_type_name(info.ggml_type);
    if !TYPES.contains(&info.ggml_type) || row == 0 || row % block != 0 {
        return Err(corrupt(format!("`{}`: rows of {row} do not fill {type_name} blocks of {block}", info.name)));
    }
    let bytes =
        read_bytes(path, info.offset, info.elements() / block * block_bytes).map_err(|e| corrupt(format!("`{}`: {e}", info.name)))?;
    // MLX's order: the slowest dimension first.
    let shape: Vec<i32> = info.dims.iter().rev().map(|&d| d as i32).collect();
    let (outer, last) = shape.split_at(shape.len() - 1);
    let widened = |dtype| -> Result<Vec<(&'static str, Array)>> {
        Ok(vec![("weight", Array::from_slice(&decode(info.ggml_type, &bytes), &shape).as_dtype(dtype)?)])
    };
    match held_as(info) {
        Held::Float(dtype) => widened(dtype),
        Held::Affine { .. } => affine(info.ggml_type, &bytes, outer, last[0]),
        Held::Mxfp4 => {
            let (packed, scales) = mxfp4_to_mlx(&bytes);
            let byte_shape: Vec<i32> = outer.iter().copied().chain([last[0] / 2]).collect();
            let scale_shape: Vec<i32> = outer.iter().copied().chain([last[0] / MXFP4_BLOCK as i32]).collect();
            let weight = Array::from_slice(&packed, &byte_shape).view_dtype(Dtype::Uint32)?;
            Ok(vec![("weight", weight), ("scales", Array::from_slice(&scales, &scale_shape))])
        }
    }
}

/// How a tensor is held once read (here, or by MLX's loader, which holds the types it reads
/// the same way, BF16 as float16).
enum Held {
    /// Floats of this dtype: the float types as they are, the rest widened.
    Float(Dtype),
    /// MLX's affine groups of 32 (Q4_0, Q4_1: 4 bits; Q8_0: 8), float16 scales and biases.
    Affine { bits: u64 },
    /// MLX's `mxfp4` layout: 4 bits a value and an e8m0 byte per 32.
    Mxfp4,
}

fn held_as(info: &TensorInfo) -> Held {
    match info.ggml_type {
        F32 => Held::Float(Dtype::Float32),
        F16 => Held::Float(Dtype::Float16),
        BF16 => Held::Float(Dtype::Bfloat16),
        Q4_0 | Q4_1 => Held::Affine { bits: 4 },
        Q8_0 => Held::Affine { bits: 8 },
        // A mixture's experts stay packed; no other layer reads `mxfp4`, and float32 holds its
        // values exactly.
        MXFP4 if info.name.contains("_exps.") => Held::Mxfp4,
        MXFP4 => Held::Float(Dtype::Float32),
        // Q5_0, Q5_1 and the K-quants (and, should one be read, any other type).
        _ => Held::Float(Dtype::Float16),
    }
}

/// The bytes `info` takes in memory once loaded: what the picker counts for a GGUF's weights
/// (widened tensors take more than their blocks on disk: Q5_0's 5.5 bits a value become 16).
pub(super) fn loaded_bytes(info: &TensorInfo) -> u64 {
    // Saturating: a header's dimensions are a stranger's numbers (discovery reads them unloaded).
    let values = info.elements();
    match held_as(info) {
        Held::Float(Dtype::Float32) => values.saturating_mul(4),
        Held::Float(_) => values.saturating_mul(2),
        Held::Affine { bits } => values.checked_mul(bits).map_or(u64::MAX, |bits| bits / 8).saturating_add(values / 32 * 4),
        Held::Mxfp4 => values / 2 + values / MXFP4_BLOCK,
    }
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

/// Q4_0, Q4_1 and Q8_0 blocks as MLX's loader packs them: MLX's affine groups of 32 (element i of a
/// row in bits 4·(i mod 8) of word i / 8, or 8·(i mod 4) of word i / 4), float16 scales and biases.
fn affine(ggml_type: u32, blocks: &[u8], outer: &[i32], row: i32) -> Result<Vec<(&'static str, Array)>> {
    let (_, size) = block_size(ggml_type);
    let n = blocks.len() / size as usize;
    let (mut packed, mut scales, mut biases) = (Vec::with_capacity(n * 32), Vec::with_capacity(n), Vec::with_capacity(n));
    for b in blocks.chunks_exact(size as usize) {
        let d = f16_at(b, 0);
        scales.push(d);
        match ggml_type {
            Q8_0 => {
                biases.push(-128.0 * d);
                packed.extend(b[2..34].iter().map(|&q| (q as i8 as i16 + 128) as u8));
            }
            _ => {
                let qs = if ggml_type == Q4_1 { &b[4..20] } else { &b[2..18] };
                biases.push(if ggml_type == Q4_1 { f16_at(b, 2) } else { -8.0 * d });
                let element = |i: usize| if i < 16 { qs[i] & 0x0f } else { qs[i - 16] >> 4 };
                packed.extend((0..16).map(|k| element(2 * k) | (element(2 * k + 1) << 4)));
            }
        }
    }
    let bits = if ggml_type == Q8_0 { 8 } else { 4 };
    let byte_shape: Vec<i32> = outer.iter().copied().chain([row * bits / 8]).collect();
    let group_shape: Vec<i32> = outer.iter().copied().chain([row / 32]).collect();
    Ok(vec![
        ("weight", Array::from_slice(&packed, &byte_shape).view_dtype(Dtype::Uint32)?),
        ("scales", Array::from_slice(&scales, &group_shape).as_dtype(Dtype::Float16)?),
        ("biases", Array::from_slice(&biases, &group_shape).as_dtype(Dtype::Float16)?),
    ])
}

/// Blocks of `ggml_type` (one of [`TYPES`] but the affine ones) → float32, as
/// gguf.quants.dequantize gives them.
fn decode(ggml_type: u32, blocks: &[u8]) -> Vec<f32> {
    let (block, bytes) = block_size(ggml_type);
    let mut out = Vec::with_capacity(blocks.len() / bytes as usize * block as usize);
    for b in blocks.chunks_exact(bytes as usize) {
        match ggml_type {
            F32 => out.push(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
            F16 => out.push(f16_at(b, 0)),
            BF16 => out.push(f32::from_bits((u16::from_le_bytes([b[0], b[1]]) as u32) << 16)),
            Q5_0 | Q5_1 => q5_block(ggml_type == Q5_1, b, &mut out),
            Q2_K => q2_k_block(b, &mut out),
            Q3_K => q3_k_block(b, &mut out),
            Q4_K | Q5_K => q4_5_k_block(ggml_type == Q5_K, b, &mut out),
            Q6_K => q6_k_block(b, &mut out),
            _ => out.extend(mxfp4_to_f32(b)),
        }
    }
    out
}

/// Q2_K: 16 bytes of 4-bit scales and mins, 64 of 2-bit values, d, dmin:
/// `(d · sc) · q − dmin · m`, 16 values a scale.
fn q2_k_block(b: &[u8], out: &mut Vec<f32>) {
    let (scales, qs) = (&b[..16], &b[16..80]);
    let (d, dmin) = (f16_at(b, 80), f16_at(b, 82));
    for e in 0..256 {
        let group = e / 16;
        let (scale, min) = (d * (scales[group] & 0x0f) as f32, dmin * (scales[group] >> 4) as f32);
        let q = (qs[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3;
        out.push(scale * q as f32 - min);
    }
}

/// Q6_K: 128 bytes of low nibbles, 64 of 2-bit highs, 16 signed scales, d:
/// `(d · scale) · (q − 32)`, 16 values a scale.
fn q6_k_block(b: &[u8], out: &mut Vec<f32>) {
    let (low, high, scales) = (&b[..128], &b[128..192], &b[192..208]);
    let d = f16_at(b, 208);
    for e in 0..256 {
        let (half, within) = (e / 128, e % 128);
        let nibble = (low[half * 64 + within % 64] >> (4 * (within / 64))) & 0x0f;
        let high_bits = (high[half * 32 + within % 32] >> (2 * (within / 32))) & 3;
        let q = (nibble | (high_bits << 4)) as i8 - 32;
        out.push((d * scales[e / 16] as i8 as f32) * q as f32);
    }
}

fn f16_at(b: &[u8], at: usize) -> f32 {
    half_to_f32(u16::from_le_bytes([b[at], b[at + 1]]))
}

/// IEEE half → single, exactly.
fn half_to_f32(h: u16) -> f32 {
    let sign = ((h as u32) & 0x8000) << 16;
    let (exponent, mantissa) = (((h >> 10) & 0x1f) as u32, (h & 0x3ff) as u32);
    let bits = match (exponent, mantissa) {
        (0, 0) => sign,
        (0, m) => {
            // Subnormal: normalize.
            let shift = m.leading_zeros() - 21;
            sign | ((113 - shift) << 23) | ((m << shift) & 0x3ff) << 13
        }
        (0x1f, m) => sign | 0x7f80_0000 | (m << 13),
        (e, m) => sign | ((e + 112) << 23) | (m << 13),
    };
    f32::from_bits(bits)
}

/// Q5_0 (d, 32 high bits, 16 bytes of low nibbles: `d · (q − 16)`) and Q5_1 (d, m, then the same:
/// `d · q + m`).
fn q5_block(with_min: bool, b: &[u8], out: &mut Vec<f32>) {
    let d = f16_at(b, 0);
    let (m, rest) = if with_min { (f16_at(b, 2), &b[4..]) } else { (0.0, &b[2..]) };
    let high = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]);
    let low = &rest[4..20];
    for e in 0..32 {
        let nibble = if e < 16 { low[e] & 0x0f } else { low[e - 16] >> 4 };
        let q = nibble | ((((high >> e) & 1) as u8) << 4);
        out.push(if with_min { d * q as f32 + m } else { d * (q as i8 - 16) as f32 });
    }
}

/// Q3_K: 32 bytes of high bits, 64 of 2-bit pairs, 12 of 6-bit sub-block scales (offset 32), d:
/// `(d · scale) · (q − 4 where the high bit is clear)`, 16 values a scale.
fn q3_k_block(b: &[u8], out: &mut Vec<f32>) {
    let (high, low, scales) = (&b[..32], &b[32..96], &b[96..108]);
    let d = f16_at(b, 108);
    for e in 0..256 {
        let group = e / 16;
        let low_bits = if group < 8 { scales[group] & 0x0f } else { scales[group - 8] >> 4 };
        let high_bits = (scales[8 + group % 4] >> (2 * (group / 4))) & 3;
        let scale = (low_bits | (high_bits << 4)) as i8 - 32;
        let q = ((low[(e / 128) * 32 + e % 32] >> (2 * ((e % 128) / 32))) & 3) as i8;
        let q = if (high[e % 32] >> (e / 32)) & 1 == 0 { q - 4 } else { q };
        out.push((d * scale as f32) * q as f32);
    }
}

/// Q4_K and Q5_K: d, dmin, 12 bytes of 6-bit scales and mins (8 sub-blocks of 32), Q5_K's 32 bytes
/// of high bits, 128 of nibbles: `(d · sc) · q − dmin · m`.
fn q4_5_k_block(five: bool, b: &[u8], out: &mut Vec<f32>) {
    let (d, dmin) = (f16_at(b, 0), f16_at(b, 2));
    let packed = &b[4..16];
    let (high, low) = if five { (&b[16..48], &b[48..176]) } else { (&b[..0], &b[16..144]) };
    for sub in 0..8 {
        let (sc, m) = if sub < 4 {
            (packed[sub] & 0x3f, packed[sub + 4] & 0x3f)
        } else {
            ((packed[sub + 4] & 0x0f) | ((packed[sub - 4] >> 2) & 0x30), (packed[sub + 4] >> 4) | ((packed[sub] >> 2) & 0x30))
        };
        let (scale, min) = (d * sc as f32, dmin * m as f32);
        for l in 0..32 {
            let nibble = (low[(sub / 2) * 32 + l] >> (4 * (sub % 2))) & 0x0f;
            let q = if five { nibble | (((high[l] >> sub) & 1) << 4) } else { nibble };
            out.push(scale * q as f32 - min);
        }
    }
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

    /// Each type's tensor in tests/reference/fixtures/tiny/gguf_blocks/blocks.gguf (make_gguf_more.py)
    /// decodes to the float32 values gguf.quants.dequantize gave, stored beside it: bit for bit.
    #[test]
    fn decoders_give_gguf_dequantization_bit_for_bit() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/gguf_blocks/blocks.gguf");
        let header = super::super::gguf_header::read_header(&path).unwrap();
        let find = |name: &str| header.tensors.iter().find(|t| t.name == name).unwrap();
        for name in ["F16", "BF16", "Q5_0", "Q5_1", "Q2_K", "Q3_K", "Q4_K", "Q5_K", "Q6_K", "MXFP4"] {
            let info = find(name);
            let (block, bytes) = block_size(info.ggml_type);
            let got = decode(info.ggml_type, &read_bytes(&path, info.offset, info.elements() / block * bytes).unwrap());
            let expected = find(&format!("{name}.expected"));
            let want: Vec<u32> = read_bytes(&path, expected.offset, expected.elements() * 4)
                .unwrap()
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            assert_eq!(got.len(), want.len(), "{name}");
            let differ = got.iter().zip(&want).filter(|(g, w)| g.to_bits() != **w).count();
            assert_eq!(differ, 0, "{name}: {differ} of {} values differ from gguf's", want.len());
        }
    }

    #[test]
    fn halves_widen_exactly() {
        for (h, f) in [(0x3c00u16, 1.0f32), (0xc000, -2.0), (0x0001, 2f32.powi(-24)), (0x7bff, 65504.0), (0x0000, 0.0)] {
            assert_eq!(half_to_f32(h), f, "{h:#x}");
        }
        assert!(half_to_f32(0x7c00).is_infinite());
    }

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
