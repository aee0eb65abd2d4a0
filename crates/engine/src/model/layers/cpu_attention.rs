//! Confab's attention kernel for MLX's CPU device (`native/cpu_attention.cpp`): grouped-query
//! heads read their keys and values in place from the cache (no repeated or copied heads), the
//! causal and sliding-window masks computed per row instead of materialised, and the work done
//! in blocks with an online softmax, so neither the scores nor a mask ever exist in memory.
//!
//! On with the CPU linear kernel (`layers::enable_cpu_kernels`), float32 only;
//! `CONFAB_CPU_KERNELS=0` turns both off and `CONFAB_CPU_ATTENTION=0` this one alone, to
//! compare. MLX's `scaled_dot_product_attention` everywhere else.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};

extern "C" {
    #[allow(clippy::too_many_arguments)]
    fn confab_cpu_attention(
        out: *mut *mut c_void,
        q: *mut c_void,
        k: *mut c_void,
        v: *mut c_void,
        scale: f32,
        causal: c_int,
        first_query: i64,
        window: i64,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
}

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Called by `layers::enable_cpu_kernels` (one switch for the CPU kernels), with whether
/// they are allowed there.
pub(crate) fn enable(allowed: bool) {
    let own = std::env::var("CONFAB_CPU_ATTENTION").map_or(true, |v| v != "0");
    ENABLED.store(allowed && own, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether the kernel takes these: float32 q [B, heads, L, d] and keys [B, kv_heads, T, d],
/// heads a multiple of kv_heads, d a multiple of 16.
pub fn supports(q: &Array, keys: &Array) -> bool {
    q.ndim() == 4
        && keys.ndim() == 4
        && q.dtype() == Dtype::Float32
        && keys.dtype() == Dtype::Float32
        && q.dim(3) % 16 == 0
        && keys.dim(1) > 0
        && q.dim(1) % keys.dim(1) == 0
}

/// Which keys the queries see. Query i is at position `first_query + i` among the keys (key j
/// at position j): it sees keys up to its own position, and with a window only the last
/// `window` of those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Causal {
    pub first_query: usize,
    pub window: Option<usize>,
}

/// softmax(q · keysᵀ · scale, causal) · values by the kernel, whether or not it is enabled
/// (the layers go through `attend`). q [B, heads, L, d]; keys and values [B, kv_heads, T, d],
/// any strides; the result is [B, heads, L, d].
pub fn causal(q: &Array, keys: &Array, values: &Array, scale: f32, mask: Causal) -> Result<Array> {
    call(q, keys, values, scale, true, mask.first_query, mask.window.unwrap_or(0))
}

/// Every key visible to every query (an encoder's attention).
pub fn unmasked(q: &Array, keys: &Array, values: &Array, scale: f32) -> Result<Array> {
    call(q, keys, values, scale, false, 0, 0)
}

/// Causal attention for a layer: the kernel when it is on and takes these arrays, else
/// MLX's scaled_dot_product_attention with the same mask (an array for a window that cuts
/// into the keys).
pub fn attend(q: &Array, keys: &Array, values: &Array, scale: f32, mask: Causal) -> Result<Array> {
    if enabled() && supports(q, keys) {
        return causal(q, keys, values, scale, mask);
    }
    let (l, held) = (q.dim(2) as usize, keys.dim(2) as usize);
    let last_query = mask.first_query + l - 1;
    match mask.window {
        Some(window) if last_query + 1 > window => {
            if l == 1 {
                // Decoding: the window is simply the last `window` keys.
                use mlx_rs::ops::indexing::IndexOp;
                let from = (held - window) as i32;
                let k = keys.index((.., .., from.., ..));
                let v = values.index((.., .., from.., ..));
                Ok(fast::scaled_dot_product_attention(q, &k, &v, scale, None, None)?)
            } else {
                let visible = super::mask::sliding_causal_mask(mask.first_query, l, window, 0)?;
                Ok(fast::scaled_dot_product_attention(q, keys, values, scale, ScaledDotProductAttentionMask::Array(&visible), None)?)
            }
        }
        // Every held key is within the window: plain causal attention.
        _ if l > 1 => Ok(fast::scaled_dot_product_attention(q, keys, values, scale, ScaledDotProductAttentionMask::Causal, None)?),
        _ => Ok(fast::scaled_dot_product_attention(q, keys, values, scale, None, None)?),
    }
}

fn call(q: &Array, keys: &Array, values: &Array, scale: f32, causal: bool, first_query: usize, window: usize) -> Result<Array> {
    let ctx = |a: &Array| a.as_ptr().ctx;
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut err = [0 as c_char; 256];
    // SAFETY: the ctx pointers are live mlx::core::array objects owned by the borrowed Arrays;
    // on success `out` is a new heap array that `Array::from_ptr` takes ownership of.
    let status = unsafe {
        confab_cpu_attention(
            &mut out,
            ctx(q),
            ctx(keys),
            ctx(values),
            scale,
            causal as c_int,
            first_query as i64,
            window as i64,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if status != 0 || out.is_null() {
        // SAFETY: the kernel wrote a NUL-terminated message into `err`.
        let message = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(EngineError::Internal(format!("cpu attention kernel: {message}")));
    }
    // SAFETY: `out` is an owned mlx::core::array*, exactly what an mlx_array's ctx holds.
    Ok(unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: out }) })
}
