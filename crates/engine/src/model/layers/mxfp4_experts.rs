//! Experts stored as MXFP4 (MLX's `mxfp4` quantization mode: e2m1 values two a byte, one e8m0
//! scale per 32 inputs), each token's chosen experts applied to it. Any MoE whose experts stay
//! MXFP4-packed calls `gather`.
//!
//! On the CPU with Confab's kernels enabled, up to `NATIVE_MAX_TOKENS` tokens go through our
//! linear kernel (`cpu_linear`, which widens MXFP4 to float32 block by block into its
//! per-ISA tiles), one product per chosen expert over the rows routed to it; MLX's
//! `gather_qmm` in `mxfp4` mode (a scalar loop on the CPU) otherwise and on every other device.

use std::ffi::CString;

use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array, Dtype, Stream};

use crate::error::{EngineError, Result};
use crate::model::layers::cpu_linear::{self, Quantized};

/// MXFP4's group: one scale per 32 inputs.
pub const GROUP: i32 = 32;

/// Tokens per call up to which the experts run through our kernel: a decode step or one prefill
/// chunk (`defaults::PREFILL_CHUNK_TOKENS`). The path reads the router's choices to the host
/// (a sync per MoE layer, cheap beside the experts' products on a CPU) and adds a graph node
/// per chosen expert; past a chunk, callers batching many rows keep MLX's one `gather_qmm` node.
pub const NATIVE_MAX_TOKENS: i32 = crate::defaults::PREFILL_CHUNK_TOKENS as i32;

/// x [T, 1 or k, 1, in] (one row per token, or one per token and choice) through the experts
/// `experts` [T, k] (uint32) choose → [T, k, 1, out]. `weight` is uint32 [E, out, in / 8] and
/// `scales` uint8 [E, out, in / 32], as MLX's `mxfp4` mode stores them.
pub fn gather(x: &Array, weight: &Array, scales: &Array, experts: &Array) -> Result<Array> {
    let tokens = experts.dim(0);
    let native = cpu_linear::enabled()
        && tokens <= NATIVE_MAX_TOKENS
        && x.ndim() == 4
        && cpu_linear::supports(&x.index((0, 0)), &weight.index(0), Some(&Quantized::mxfp4(&scales.index(0))));
    if native {
        by_expert(x, weight, scales, experts)
    } else {
        gather_qmm(x, weight, scales, experts)
    }
}

/// One `cpu_linear` product per chosen expert, over the rows routed to it, put back in the
/// (token, choice) order.
fn by_expert(x: &Array, weight: &Array, scales: &Array, experts: &Array) -> Result<Array> {
    let (tokens, k, inputs) = (experts.dim(0), experts.dim(1), x.dim(-1));
    let per_token = x.dim(1); // 1: the same row for every choice; k: a row per choice
                              // top-k's indices are a strided slice; read them to the host as one row-major buffer.
    let chosen = experts.as_dtype(Dtype::Uint32)?.contiguous()?;
    chosen.eval()?;
    let chosen: &[u32] = chosen.try_as_slice().map_err(|e| EngineError::Internal(format!("the router's choices: {e}")))?;
    // Pairs (token, choice) in row-major order, grouped by expert.
    let mut order: Vec<u32> = (0..tokens * k).map(|i| i as u32).collect();
    order.sort_by_key(|&i| chosen[i as usize]);
    let rows = x.reshape(&[tokens * per_token, inputs])?;
    let mut outputs = Vec::new();
    let mut start = 0;
    while start < order.len() {
        let expert = chosen[order[start] as usize];
        let end = start + order[start..].iter().take_while(|&&i| chosen[i as usize] == expert).count();
        let pairs = &order[start..end];
        let x_rows: Vec<u32> = pairs.iter().map(|&i| if per_token == 1 { i / k as u32 } else { i }).collect();
        let x_rows = rows.take_axis(Array::from_slice(&x_rows, &[x_rows.len() as i32]), 0)?;
        let (w, s) = (weight.index(expert as i32), scales.index(expert as i32));
        outputs.push(cpu_linear::linear(&x_rows, &w, Some(&Quantized::mxfp4(&s)))?);
        start = end;
    }
    // Row r of the concatenation is pair order[r]; the inverse puts each pair at its place.
    let mut inverse = vec![0u32; order.len()];
    for (r, &pair) in order.iter().enumerate() {
        inverse[pair as usize] = r as u32;
    }
    let all = ops::concatenate(&outputs, 0)?;
    let out = all.take_axis(Array::from_slice(&inverse, &[inverse.len() as i32]), 0)?;
    let width = out.dim(-1);
    Ok(out.reshape(&[tokens, k, 1, width])?)
}

/// `gather_qmm` in MLX's `mxfp4` mode (mlx-rs passes only the default, affine, mode).
pub fn gather_qmm(x: &Array, weight: &Array, scales: &Array, experts: &Array) -> Result<Array> {
    let mode = CString::new("mxfp4").expect("no NUL");
    let stream = Stream::thread_local_or_default();
    let optional = |value: i32| mlx_sys::mlx_optional_int_ { value, has_value: true };
    // SAFETY: the arrays are live and borrowed for the call; empty arrays stand for the absent
    // biases and left-hand indices and are freed after it; on success `out` is a new array
    // that `Array::from_ptr` takes ownership of.
    unsafe {
        let (no_biases, no_lhs) = (mlx_sys::mlx_array_new(), mlx_sys::mlx_array_new());
        let mut out = mlx_sys::mlx_array_new();
        let status = mlx_sys::mlx_gather_qmm(
            &mut out,
            x.as_ptr(),
            weight.as_ptr(),
            scales.as_ptr(),
            no_biases,
            no_lhs,
            experts.as_ptr(),
            true,
            optional(GROUP),
            optional(4),
            mode.as_ptr(),
            false,
            stream.as_ptr(),
        );
        mlx_sys::mlx_array_free(no_biases);
        mlx_sys::mlx_array_free(no_lhs);
        if status != 0 {
            mlx_sys::mlx_array_free(out);
            return Err(EngineError::Internal("MLX's gather_qmm refused the MXFP4 experts".into()));
        }
        Ok(Array::from_ptr(out))
    }
}
