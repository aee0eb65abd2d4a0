//! Attention masks built as arrays, for MLX's attention (the CPU kernel computes its own).

use mlx_rs::{ops, Array};

use crate::error::Result;

/// [L, offset + L - start] booleans: query i (at offset + i) sees the key at position p
/// (keys start at `start`) when i + offset - window < p ≤ i + offset.
pub fn sliding_causal_mask(offset: usize, l: usize, window: usize, start: usize) -> Result<Array> {
    let q = ops::add(Array::from_iter(0..l as i32, &[l as i32, 1]), Array::from_int(offset as i32))?;
    let k = Array::from_iter(start as i32..(offset + l) as i32, &[1, (offset + l - start) as i32]);
    let causal = ops::le(&k, &q)?;
    let recent = ops::gt(&k, &ops::subtract(&q, Array::from_int(window as i32))?)?;
    Ok(ops::logical_and(&causal, &recent)?)
}
