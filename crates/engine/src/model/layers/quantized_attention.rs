//! Attention over quantized keys and values, read packed: q·kᵀ and p·v are MLX's
//! `quantized_matmul` against the cache's data, scales and biases, as mlx-lm's
//! `quantized_scaled_dot_product_attention` computes them (queries scaled first, grouped query
//! heads as an extra axis so each KV head is read once, a precise softmax).

use mlx_rs::ops::indexing::{Ellipsis, IndexOp};
use mlx_rs::{ops, Array, Dtype};

use crate::error::Result;
use crate::state::{KvQuantization, Packed};

/// Whether a chunk of `queries` reads the layer's keys and values dequantized, through Confab's
/// CPU attention kernel, instead of packed: on a CPU, for prompt chunks. MLX's CPU
/// `quantized_matmul` is a plain loop, so a 512-query chunk against thousands of packed keys
/// takes minutes where the kernel takes seconds; the dequantized copy is one layer's keys and
/// values for the length of one call (the same values `quantized_matmul` computes with, summed
/// in another order). Decode steps, and every step on a GPU, read them packed.
pub fn reads_dequantized(queries: usize) -> bool {
    queries > 1 && super::cpu_attention::enabled()
}

/// q [B, heads, L, D] against `keys` and `values` [B, kv_heads, S, ·] packed by `quantization`;
/// `visible` [L, S] booleans (true = attend) where a mask applies; `sinks` [heads]: one more
/// logit per head that joins the softmax with no value. Returns [B, heads, L, D].
pub fn attend(
    q: &Array,
    keys: &Packed,
    values: &Packed,
    scale: f32,
    visible: Option<&Array>,
    sinks: Option<&Array>,
    quantization: KvQuantization,
) -> Result<Array> {
    let (b, heads, l, d) = (q.dim(0), q.dim(1), q.dim(2), q.dim(3));
    let kv_heads = keys.data.dim(1);
    let repeats = heads / kv_heads;
    let (group, bits) = (quantization.group_size as i32, quantization.bits as i32);
    let queries = ops::multiply(q, Array::from_f32(scale).as_dtype(q.dtype())?)?;
    // Grouped heads: [B, kv_heads, repeats, L, D] against [B, kv_heads, 1, S, ·].
    let grouped = |p: &Packed| -> Result<[Array; 3]> {
        let widen = |a: &Array| -> Result<Array> { Ok(if repeats > 1 { ops::expand_dims(a, -3)? } else { a.clone() }) };
        Ok([widen(&p.data)?, widen(&p.scales)?, widen(&p.biases)?])
    };
    let queries = if repeats > 1 { queries.reshape(&[b, kv_heads, repeats, l, d])? } else { queries };
    let [kd, ks, kb] = grouped(keys)?;
    let mut scores = ops::quantized_matmul(&queries, &kd, &ks, &kb, true, group, bits)?;
    if let Some(visible) = visible {
        scores = ops::select(visible, &scores, lowest(scores.dtype())?)?;
    }
    let probabilities = match sinks {
        Some(sinks) => {
            // The sink logit as column 0 of every query's scores, dropped after the softmax.
            let mut shape = scores.shape().to_vec();
            let last = shape.len() - 1;
            shape[last] = 1;
            let per_head: Vec<i32> = if repeats > 1 { vec![1, kv_heads, repeats, 1, 1] } else { vec![1, heads, 1, 1] };
            let column = ops::broadcast_to(sinks.as_dtype(scores.dtype())?.reshape(&per_head)?, &shape)?;
            let with_sink = ops::softmax_axis(ops::concatenate(&[&column, &scores], -1)?, -1, true)?;
            let s = with_sink.dim(-1);
            with_sink.index((Ellipsis, 1..s))
        }
        None => ops::softmax_axis(&scores, -1, true)?,
    };
    let [vd, vs, vb] = grouped(values)?;
    let out = ops::quantized_matmul(&probabilities, &vd, &vs, &vb, false, group, bits)?;
    Ok(if repeats > 1 { out.reshape(&[b, heads, l, d])? } else { out })
}

/// The most negative finite value of `dtype` (what a masked score becomes, as in mlx-lm).
fn lowest(dtype: Dtype) -> Result<Array> {
    let value = match dtype {
        Dtype::Float16 => -65504.0,
        Dtype::Bfloat16 => -3.389_531_4e38,
        _ => f32::MIN,
    };
    Ok(Array::from_f32(value).as_dtype(dtype)?)
}
