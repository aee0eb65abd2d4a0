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

    #[allow(clippy::too_many_arguments)]
    fn confab_cpu_cache_write(
        out: *mut *mut c_void,
        buffer: *mut c_void,
        fresh: *mut c_void,
        row: i64,
        position: i64,
        rope_dims: i64,
        traditional: c_int,
        rope_scale: f32,
        inv_freq: *const f32,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;

    #[allow(clippy::too_many_arguments)]
    fn confab_cpu_decode_attention(
        out: *mut *mut c_void,
        q: *mut c_void,
        keys: *const *mut c_void,
        values: *const *mut c_void,
        rows: i64,
        lens: *const i64,
        heads: i64,
        scale: f32,
        rope_dims: i64,
        traditional: c_int,
        rope_scale: f32,
        inv_freq: *const f32,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
}

static ENABLED: AtomicBool = AtomicBool::new(false);
static DECODE: AtomicBool = AtomicBool::new(false);

/// Called by `layers::enable_cpu_kernels` (one switch for the CPU kernels), with whether
/// they are allowed there. `CONFAB_CPU_DECODE=0` keeps the attention kernel but turns off its
/// decode path (`decode_attention`, `cache_write`): decode steps then go row by row through
/// MLX's RoPE and cache updates, as before it, to compare.
pub(crate) fn enable(allowed: bool) {
    let on = |name: &str| std::env::var(name).map_or(true, |v| v != "0");
    let own = allowed && on("CONFAB_CPU_ATTENTION");
    ENABLED.store(own, Ordering::Relaxed);
    DECODE.store(own && on("CONFAB_CPU_DECODE"), Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Whether decode steps take `decode_attention` and `cache_write` (see `enable`).
pub fn decode_enabled() -> bool {
    DECODE.load(Ordering::Relaxed)
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

/// RoPE's parameters as the decode kernels take them (`Rope::table`): the first `dims`
/// features of a head rotate, pair i by position × `scale` × `inv_freq[i]`.
#[derive(Debug, Clone, PartialEq)]
pub struct RopeTable {
    pub dims: usize,
    pub traditional: bool,
    pub scale: f32,
    /// `dims / 2` inverse frequencies, exactly the ones MLX's RoPE computes.
    pub inv_freq: Vec<f32>,
}

/// One sequence's cache buffer `buffer` ([1, kv_heads, capacity, d], float32) with row `row` of
/// `fresh` (a decode step's keys or values for B rows, [B, 1, kv_heads × d] or
/// [B, 1, kv_heads, d]) written at `position`, rotated there when `rope` is given (keys). MLX
/// writes into the buffer itself when nothing else holds it (drop yours), else into a copy.
pub fn cache_write(buffer: &Array, fresh: &Array, row: usize, position: usize, rope: Option<&RopeTable>) -> Result<Array> {
    let (dims, traditional, scale, freqs) = rope_args(rope);
    checked("cache write", |out, err, len| unsafe {
        // SAFETY: live mlx::core::array ctx pointers; `freqs` holds dims / 2 floats.
        confab_cpu_cache_write(
            out,
            buffer.as_ptr().ctx,
            fresh.as_ptr().ctx,
            row as i64,
            position as i64,
            dims,
            traditional,
            scale,
            freqs,
            err,
            len,
        )
    })
}

/// Attention for a decode step of several sequences in one node: row b of q ([B, 1, heads × d]
/// or [B, 1, heads, d], float32), rotated by `rope` to position `lens[b] - 1`, over the first
/// `lens[b]` positions of `keys[b]` and `values[b]` (each row's own cache buffer,
/// [1, kv_heads, capacity, d], read in place). Returns [B, 1, heads × d]. Each row's result is
/// what `causal` gives for it alone.
pub fn decode_attention(
    q: &Array,
    keys: &[Array],
    values: &[Array],
    lens: &[usize],
    heads: usize,
    scale: f32,
    rope: Option<&RopeTable>,
) -> Result<Array> {
    if keys.is_empty() || keys.len() != values.len() || keys.len() != lens.len() {
        return Err(EngineError::Internal(format!(
            "decode attention: {} rows of keys, {} of values, {} lengths",
            keys.len(),
            values.len(),
            lens.len()
        )));
    }
    let (dims, traditional, rope_scale, freqs) = rope_args(rope);
    let k: Vec<*mut c_void> = keys.iter().map(|a| a.as_ptr().ctx).collect();
    let v: Vec<*mut c_void> = values.iter().map(|a| a.as_ptr().ctx).collect();
    let lens: Vec<i64> = lens.iter().map(|&l| l as i64).collect();
    checked("decode attention", |out, err, len| unsafe {
        // SAFETY: live ctx pointers, `lens.len()` of each; `freqs` holds dims / 2 floats.
        confab_cpu_decode_attention(
            out,
            q.as_ptr().ctx,
            k.as_ptr(),
            v.as_ptr(),
            lens.len() as i64,
            lens.as_ptr(),
            heads as i64,
            scale,
            dims,
            traditional,
            rope_scale,
            freqs,
            err,
            len,
        )
    })
}

fn rope_args(rope: Option<&RopeTable>) -> (i64, c_int, f32, *const f32) {
    match rope {
        Some(r) => (r.dims as i64, r.traditional as c_int, r.scale, r.inv_freq.as_ptr()),
        None => (0, 0, 1.0, std::ptr::null()),
    }
}

/// Runs a kernel entry point that makes a new array or writes a message.
fn checked(what: &str, f: impl FnOnce(*mut *mut c_void, *mut c_char, usize) -> c_int) -> Result<Array> {
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut err = [0 as c_char; 256];
    let status = f(&mut out, err.as_mut_ptr(), err.len());
    if status != 0 || out.is_null() {
        // SAFETY: the kernel wrote a NUL-terminated message into `err`.
        let message = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(EngineError::Internal(format!("cpu {what} kernel: {message}")));
    }
    // SAFETY: `out` is an owned mlx::core::array*, exactly what an mlx_array's ctx holds.
    Ok(unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: out }) })
}

fn call(q: &Array, keys: &Array, values: &Array, scale: f32, causal: bool, first_query: usize, window: usize) -> Result<Array> {
    let ctx = |a: &Array| a.as_ptr().ctx;
    checked("attention", |out, err, len| unsafe {
        // SAFETY: the ctx pointers are live mlx::core::array objects owned by the borrowed Arrays.
        confab_cpu_attention(out, ctx(q), ctx(keys), ctx(values), scale, causal as c_int, first_query as i64, window as i64, err, len)
    })
}
