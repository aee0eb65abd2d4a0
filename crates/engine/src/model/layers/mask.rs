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

/// How the positions of a whole sequence attend to each other when it is read in one pass with
/// nothing kept (what embedding models do).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum AttentionMode {
    /// Each position sees itself and those before it (decoder models, Qwen3-Embedding).
    #[default]
    Causal,
    /// Each position sees every other (config.json's `use_bidirectional_attention`, as
    /// EmbeddingGemma sets it).
    Bidirectional,
}

/// [L, L] booleans (true = attend) for a whole sequence of `l` positions from position 0, in a
/// layer with the given sliding `window` (config.json's `sliding_window`, None for a global layer).
/// Causal: as `sliding_causal_mask`. Bidirectional: transformers' Gemma 3 reads a bidirectional
/// model's window as `window / 2 + 1` and lets a position see those less than that away on either
/// side (`_bidirectional_window_overlay`), so the window is centred on the query.
pub fn whole_sequence_mask(l: usize, window: Option<usize>, mode: AttentionMode) -> Result<Array> {
    let q = Array::from_iter(0..l as i32, &[l as i32, 1]);
    let k = Array::from_iter(0..l as i32, &[1, l as i32]);
    Ok(match (mode, window) {
        (AttentionMode::Causal, None) => ops::le(&k, &q)?,
        (AttentionMode::Causal, Some(window)) => sliding_causal_mask(0, l, window, 0)?,
        (AttentionMode::Bidirectional, None) => ops::broadcast_to(Array::from_bool(true), &[l as i32, l as i32])?,
        (AttentionMode::Bidirectional, Some(window)) => {
            let reach = (window / 2 + 1) as i32;
            ops::lt(&ops::abs(&ops::subtract(&q, &k)?)?, Array::from_int(reach))?
        }
    })
}

/// [B, 1, L, L] booleans for B sequences right-padded to `l` positions, sequence b's first
/// `lengths[b]` positions real: among real positions, `whole_sequence_mask`; no position attends
/// to a padding one, and a padding position attends to itself alone (its output is never read;
/// a query with no key at all would make NaN, which the values would carry into the real rows).
/// So each sequence's real positions see exactly what they see read alone.
pub fn padded_whole_sequence_mask(lengths: &[usize], l: usize, window: Option<usize>, mode: AttentionMode) -> Result<Array> {
    let rows = lengths.len() as i32;
    let lengths = Array::from_slice(&lengths.iter().map(|&n| n as i32).collect::<Vec<_>>(), &[rows, 1, 1, 1]);
    let q = Array::from_iter(0..l as i32, &[1, 1, l as i32, 1]);
    let k = Array::from_iter(0..l as i32, &[1, 1, 1, l as i32]);
    let (real_q, real_k) = (ops::lt(&q, &lengths)?, ops::lt(&k, &lengths)?);
    let real = ops::logical_and(&ops::logical_and(&whole_sequence_mask(l, window, mode)?, &real_q)?, &real_k)?;
    let own = ops::logical_and(&ops::eq(&q, &k)?, &ops::logical_not(&real_q)?)?;
    Ok(ops::logical_or(&real, &own)?)
}

#[cfg(test)]
mod tests {
    use mlx_rs::ops::indexing::IndexOp;

    use super::*;

    fn rows(mask: &Array) -> Vec<Vec<bool>> {
        let l = mask.dim(0) as usize;
        // Added to a concrete array of zeros, so a broadcast mask is written out contiguously.
        let zeros = Array::from_slice(&vec![0i32; l * l], &[l as i32, l as i32]);
        let flat = ops::add(mask.as_dtype(mlx_rs::Dtype::Int32).unwrap(), &zeros).unwrap();
        flat.eval().unwrap();
        let flat: Vec<bool> = flat.as_slice::<i32>().iter().map(|&v| v != 0).collect();
        flat.chunks(l).map(<[bool]>::to_vec).collect()
    }

    #[test]
    fn whole_sequence_masks_per_mode_and_window() {
        let causal = rows(&whole_sequence_mask(3, None, AttentionMode::Causal).unwrap());
        assert_eq!(causal, [[true, false, false], [true, true, false], [true, true, true]]);
        let both = rows(&whole_sequence_mask(3, None, AttentionMode::Bidirectional).unwrap());
        assert!(both.iter().flatten().all(|&b| b));
        // config.json's window 4 reads as 4 / 2 + 1 = 3: distances 0, 1, 2 either way.
        let centred = rows(&whole_sequence_mask(5, Some(4), AttentionMode::Bidirectional).unwrap());
        assert_eq!(centred[0], [true, true, true, false, false]);
        assert_eq!(centred[2], [true, true, true, true, true]);
        assert_eq!(centred[4], [false, false, true, true, true]);
        let sliding = rows(&whole_sequence_mask(4, Some(2), AttentionMode::Causal).unwrap());
        assert_eq!(sliding[3], [false, false, true, true]);
    }

    #[test]
    fn padding_is_never_attended_to_and_attends_to_itself_alone() {
        let mask = padded_whole_sequence_mask(&[3, 1], 3, None, AttentionMode::Bidirectional).unwrap();
        assert_eq!(mask.shape(), [2, 1, 3, 3]);
        let full = rows(&mask.index((0, 0, .., ..)));
        assert!(full.iter().flatten().all(|&b| b), "a sequence with no padding sees as alone");
        let short = rows(&mask.index((1, 0, .., ..)));
        assert_eq!(short, [[true, false, false], [false, true, false], [false, false, true]]);
        let causal = padded_whole_sequence_mask(&[2], 3, None, AttentionMode::Causal).unwrap();
        assert_eq!(rows(&causal.index((0, 0, .., ..))), [[true, false, false], [true, true, false], [false, false, true]]);
    }
}
