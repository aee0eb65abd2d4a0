//! The gated delta rule (Gated DeltaNet): linear attention whose state `S` [key_dim, value_dim]
//! per head decays by `exp(g)` and is corrected towards each new value, then read by the query:
//!
//! ```text
//! S ← exp(g_t) · S
//! S ← S + k_t ⊗ β_t (v_t − Sᵀ k_t)
//! o_t = Sᵀ q_t
//! ```
//!
//! [`chunked`] computes a whole prompt chunk with matmuls (the UT/WY form transformers and FLA
//! use: within a chunk of up to [`CHUNK`] positions the updates collapse into one triangular
//! system, and only the chunk-to-chunk recurrence is sequential); [`step`] advances one token.
//! Both take the same inputs and agree to float32 rounding, so a prompt may be fed in any split.
//!
//! Inputs are float32 (as both references compute): q and k [B, H, L, Dk] already
//! L2-normalised (q also scaled by Dk^-0.5), v [B, H, L, Dv], the log-decay g (≤ 0) and β
//! [B, H, L]; the state is [B, H, Dk, Dv]. Heads must already match (repeat grouped key heads
//! over their value heads first).

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;

/// Positions per chunk, as transformers' `torch_chunk_gated_delta_rule`.
pub const CHUNK: usize = 64;

/// The rule over L ≥ 1 positions: (outputs [B, H, L, Dv], the state after them).
pub fn chunked(q: &Array, k: &Array, v: &Array, g: &Array, beta: &Array, state: Option<&Array>) -> Result<(Array, Array)> {
    let (b, h, l, dk) = (q.dim(0), q.dim(1), q.dim(2), q.dim(3));
    let dv = v.dim(3);
    // A prompt shorter than a chunk is one chunk of its own length (no padding needed).
    let c = l.min(CHUNK as i32);
    let n = (l + c - 1) / c;
    let pad = n * c - l;
    // Zero padding is inert: g = 0 keeps the state, β = 0 and k = v = 0 add nothing.
    let padded = |x: &Array| -> Result<Array> {
        if pad == 0 {
            return Ok(x.clone());
        }
        let mut shape = x.shape().to_vec();
        shape[2] = pad;
        Ok(ops::concatenate(&[x, &ops::zeros_dtype(&shape, x.dtype())?], 2)?)
    };
    let chunks = |x: &Array, d: i32| -> Result<Array> { Ok(padded(x)?.reshape(&[b, h, n, c, d])?) };
    let (q, k, v) = (chunks(q, dk)?, chunks(k, dk)?, chunks(v, dv)?);
    let g = padded(g)?.reshape(&[b, h, n, c])?;
    let beta = padded(beta)?.reshape(&[b, h, n, c, 1])?;
    let k_beta = ops::multiply(&k, &beta)?;
    let v_beta = ops::multiply(&v, &beta)?;

    // Log-decay accumulated from the chunk start; decay[i, j] = exp(cum_i − cum_j) for j ≤ i.
    let cum = g.cumsum(-1, None, None)?;
    let diff = ops::subtract(&cum.expand_dims(-1)?, &cum.expand_dims(-2)?)?;
    let causal = lower_mask(c, 0)?;
    let decay = ops::exp(ops::select(&causal, &diff, Array::from_f32(f32::NEG_INFINITY))?)?;
    let k_t = k.swap_axes(-1, -2)?;

    // (I + strictly_lower(β k kᵀ ⊙ decay))⁻¹ turns the chunk's sequential corrections into matmuls.
    let system = ops::multiply(&ops::multiply(&ops::matmul(&k_beta, &k_t)?, &decay)?, &lower_mask(c, -1)?.as_dtype(Dtype::Float32)?)?;
    let inverse = unit_lower_inverse(&system, c)?;
    let exp_cum = ops::exp(&cum)?.expand_dims(-1)?;
    let new_values = ops::matmul(&inverse, &v_beta)?;
    let k_cumdecay = ops::matmul(&inverse, &ops::multiply(&k_beta, &exp_cum)?)?;
    let intra = ops::multiply(&ops::matmul(&q, &k_t)?, &decay)?;

    let last = cum.index((.., .., .., (c - 1)..));
    let q_decayed = ops::multiply(&q, &exp_cum)?;
    let k_decayed = ops::multiply(&k, &ops::exp(&ops::subtract(&last, &cum)?)?.expand_dims(-1)?)?;
    let chunk_decay = ops::exp(&last)?.expand_dims(-1)?; // [B, H, N, 1, 1]

    let mut s = match state {
        Some(s) => s.as_dtype(Dtype::Float32)?,
        None => ops::zeros_dtype(&[b, h, dk, dv], Dtype::Float32)?,
    };
    let mut outs = Vec::with_capacity(n as usize);
    for i in 0..n {
        let at = |x: &Array| x.index((.., .., i, .., ..));
        let v_new = ops::subtract(at(&new_values), ops::matmul(at(&k_cumdecay), &s)?)?;
        let out = ops::add(ops::matmul(at(&q_decayed), &s)?, ops::matmul(at(&intra), &v_new)?)?;
        outs.push(out);
        let write = ops::matmul(&at(&k_decayed).swap_axes(-1, -2)?, &v_new)?;
        s = ops::add(ops::multiply(&s, at(&chunk_decay))?, &write)?;
    }
    let out = if outs.len() == 1 { outs.pop().expect("one chunk") } else { ops::concatenate(&outs, 2)? };
    let out = if pad > 0 { out.index((.., .., ..l, ..)) } else { out };
    Ok((out, s))
}

/// One position (L = 1): (output [B, H, 1, Dv], the new state).
pub fn step(q: &Array, k: &Array, v: &Array, g: &Array, beta: &Array, state: Option<&Array>) -> Result<(Array, Array)> {
    let s = match state {
        Some(s) => s.as_dtype(Dtype::Float32)?,
        None => ops::zeros_dtype(&[q.dim(0), q.dim(1), q.dim(3), v.dim(3)], Dtype::Float32)?,
    };
    let (s, write) = decay_and_write(k, v, g, beta, s)?;
    let s = ops::add(&s, &write)?;
    Ok((ops::matmul(q, &s)?, s))
}

/// One position for several sequences, each with its own state: q, k, v, g and β hold B
/// rows (row i continues `states[i]`, [1, H, Dk, Dv], None for a fresh sequence). The decay
/// and the correction run once for the batch; each row's new state is made in a buffer of its
/// own (a view of a batch-sized state would keep the whole batch alive after its row
/// finishes). Returns the outputs [B, H, 1, Dv] and the rows' new states. Row i's results are
/// what `step` gives for it alone: the same operations on the same values (a batched matmul
/// multiplies each batch entry on its own).
pub fn step_rows(q: &Array, k: &Array, v: &Array, g: &Array, beta: &Array, states: &[Option<&Array>]) -> Result<(Array, Vec<Array>)> {
    if states.len() == 1 {
        let (out, s) = step(q, k, v, g, beta, states[0])?;
        return Ok((out, vec![s]));
    }
    let (h, dk, dv) = (q.dim(1), q.dim(3), v.dim(3));
    let stacked = states
        .iter()
        .map(|s| match s {
            Some(s) => Ok(s.as_dtype(Dtype::Float32)?),
            None => Ok(ops::zeros_dtype(&[1, h, dk, dv], Dtype::Float32)?),
        })
        .collect::<Result<Vec<_>>>()?;
    let (s, write) = decay_and_write(k, v, g, beta, ops::concatenate(&stacked, 0)?)?;
    let mut outs = Vec::with_capacity(states.len());
    let mut new = Vec::with_capacity(states.len());
    for i in 0..states.len() as i32 {
        let row = |a: &Array| a.index(i..i + 1);
        let s = ops::add(row(&s), row(&write))?;
        outs.push(ops::matmul(row(q), &s)?);
        new.push(s);
    }
    Ok((ops::concatenate(&outs, 0)?, new))
}

/// The state decayed by exp(g), and the correction to add to it: k ⊗ β (v − Sᵀ k).
fn decay_and_write(k: &Array, v: &Array, g: &Array, beta: &Array, s: Array) -> Result<(Array, Array)> {
    let s = ops::multiply(&s, &ops::exp(g)?.expand_dims(-1)?)?;
    let remembered = ops::matmul(k, &s)?; // [B, H, 1, Dv]
    let delta = ops::multiply(&ops::subtract(v, &remembered)?, &beta.expand_dims(-1)?)?;
    let write = ops::matmul(&k.swap_axes(-1, -2)?, &delta)?;
    Ok((s, write))
}

/// [n, n] booleans, true at and below diagonal `k` (0: the main one, -1: strictly below).
fn lower_mask(n: i32, k: i32) -> Result<Array> {
    let rows = Array::from_iter(0..n, &[n, 1]);
    let cols = Array::from_iter(0..n, &[1, n]);
    Ok(ops::le(&ops::subtract(&cols, Array::from_int(k))?, &rows)?)
}

/// (I + a)⁻¹ for `a` [.., n, n] strictly lower triangular, by doubling: with the inverse's
/// diagonal blocks of size s known, those of size 2s follow from
/// [[A, 0], [C, D]]⁻¹ = [[A⁻¹, 0], [−D⁻¹ C A⁻¹, D⁻¹]], for all blocks at once as
/// X ← X − X (a ⊙ mask_s) X. log2(n) levels of batched matmuls, on any device (MLX's
/// triangular solve runs on the CPU only), and as stable as forward substitution: every
/// intermediate is a block of the true inverse.
fn unit_lower_inverse(a: &Array, n: i32) -> Result<Array> {
    let mut x: Option<Array> = None;
    let mut s = 1;
    while s < n {
        let mask: Vec<f32> = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i / (2 * s) == j / (2 * s) && (i / s) % 2 == 1 && (j / s) % 2 == 0) as u8 as f32))
            .collect();
        let c = ops::multiply(a, Array::from_slice(&mask, &[n, n]))?;
        x = Some(match x {
            // With X = I: X − X C X = I − C.
            None => ops::subtract(&ops::eye::<f32>(n, None, None)?, &c)?,
            Some(x) => ops::subtract(&x, &ops::matmul(&ops::matmul(&x, &c)?, &x)?)?,
        });
        s *= 2;
    }
    match x {
        Some(x) => Ok(x),
        None => Ok(ops::broadcast_to(&ops::eye::<f32>(n, None, None)?, a.shape())?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn random(shape: &[i32], seed: u64) -> Array {
        let key = mlx_rs::random::key(seed).unwrap();
        mlx_rs::random::normal::<f32>(shape, None, None, &key).unwrap()
    }

    /// Inputs shaped as the layer makes them: unit-norm keys, q scaled, g ≤ 0, β in (0, 1).
    fn inputs(l: i32, seed: u64) -> [Array; 5] {
        let (b, h, dk, dv) = (1, 3, 16, 8);
        let unit = |x: Array| ops::divide(&x, ops::sqrt(ops::sum_axis(x.square().unwrap(), -1, true).unwrap()).unwrap()).unwrap();
        let q = ops::multiply(unit(random(&[b, h, l, dk], seed)), Array::from_f32(0.25)).unwrap();
        let k = unit(random(&[b, h, l, dk], seed + 1));
        let v = random(&[b, h, l, dv], seed + 2);
        let g = ops::negative(ops::abs(ops::multiply(random(&[b, h, l], seed + 3), Array::from_f32(0.3)).unwrap()).unwrap()).unwrap();
        let beta = ops::sigmoid(random(&[b, h, l], seed + 4)).unwrap();
        [q, k, v, g, beta]
    }

    fn max_diff(a: &Array, b: &Array) -> f32 {
        ops::max(ops::abs(ops::subtract(a, b).unwrap()).unwrap(), None).unwrap().item_exact::<f32>()
    }

    /// Token by token through `step` against one `chunked` call over 150 positions (three
    /// chunks, the last padded), and against chunked calls of uneven sizes carrying the state.
    #[test]
    fn chunked_matches_the_recurrence() {
        let l = 150;
        let [q, k, v, g, beta] = inputs(l, 7);
        let pos = |x: &Array, t: i32| x.index((.., .., t..t + 1));
        let mut state: Option<Array> = None;
        let mut outs = vec![];
        for t in 0..l {
            let (o, s) = step(&pos(&q, t), &pos(&k, t), &pos(&v, t), &pos(&g, t), &pos(&beta, t), state.as_ref()).unwrap();
            outs.push(o);
            state = Some(s);
        }
        let sequential = ops::concatenate(&outs, 2).unwrap();
        let (whole, whole_state) = chunked(&q, &k, &v, &g, &beta, None).unwrap();
        assert!(max_diff(&whole, &sequential) < 1e-5, "outputs differ by {}", max_diff(&whole, &sequential));
        assert!(max_diff(&whole_state, state.as_ref().unwrap()) < 1e-5);

        let span = |x: &Array, a: i32, b: i32| x.index((.., .., a..b));
        let mut state: Option<Array> = None;
        let mut outs = vec![];
        for (a, b) in [(0, 16), (16, 21), (21, 100), (100, 150)] {
            let (o, s) =
                chunked(&span(&q, a, b), &span(&k, a, b), &span(&v, a, b), &span(&g, a, b), &span(&beta, a, b), state.as_ref()).unwrap();
            outs.push(o);
            state = Some(s);
        }
        let split = ops::concatenate(&outs, 2).unwrap();
        assert!(max_diff(&split, &sequential) < 1e-5, "split outputs differ by {}", max_diff(&split, &sequential));
    }

    /// Three sequences stepped together, one of them fresh, give exactly what each gives
    /// stepped alone, outputs and states.
    #[test]
    fn rows_step_as_they_do_alone() {
        let rows: Vec<[Array; 5]> = (0..3).map(|r| inputs(1, 40 + 10 * r)).collect();
        let states = [Some(ops::multiply(random(&[1, 3, 16, 8], 3), Array::from_f32(0.1)).unwrap()), None, Some(random(&[1, 3, 16, 8], 5))];
        let stack = |n: usize| ops::concatenate(&rows.iter().map(|r| r[n].clone()).collect::<Vec<_>>(), 0).unwrap();
        let refs: Vec<Option<&Array>> = states.iter().map(Option::as_ref).collect();
        let (out, new) = step_rows(&stack(0), &stack(1), &stack(2), &stack(3), &stack(4), &refs).unwrap();
        assert_eq!(new.len(), 3);
        for (i, [q, k, v, g, beta]) in rows.iter().enumerate() {
            let (o, s) = step(q, k, v, g, beta, states[i].as_ref()).unwrap();
            assert_eq!(max_diff(&out.index(i as i32..i as i32 + 1), &o), 0.0, "row {i} output");
            assert_eq!(new[i].shape(), s.shape());
            assert_eq!(max_diff(&new[i], &s), 0.0, "row {i} state");
        }
    }
}
