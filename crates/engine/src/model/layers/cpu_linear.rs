//! Confab's linear-layer kernel for MLX's CPU device (`native/cpu_linear.cpp`): one-row
//! products through sgemv instead of sgemm (or read straight from bfloat16 and 4/8-bit
//! weights), and several rows through sgemm on weights widened to float32 block by block, so
//! every format keeps its stored size in memory.
//!
//! On by default when the engine runs on the CPU (`layers::enable_cpu_kernels`); MLX's own matmul
//! everywhere else. `CONFAB_CPU_KERNELS=0` turns it off, to compare (and the attention
//! kernel, `cpu_attention`, which this switch also governs).

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, Ordering};

use mlx_rs::{Array, Dtype};

use crate::error::{EngineError, Result};
use crate::model::config::Activation;

extern "C" {
    fn confab_cpu_linear_available() -> c_int;
    fn confab_cpu_isa() -> c_int;
    #[allow(clippy::too_many_arguments)]
    fn confab_cpu_linear(
        out: *mut *mut c_void,
        x: *mut c_void,
        w: *mut c_void,
        scales: *mut c_void,
        biases: *mut c_void,
        group_size: c_int,
        bits: c_int,
        mode: c_int,
        gate_activation: c_int,
        float32_out: c_int,
        err: *mut c_char,
        err_len: usize,
    ) -> c_int;
}

static ENABLED: AtomicBool = AtomicBool::new(false);

/// Called by `layers::enable_cpu_kernels`, with whether the CPU kernels are allowed: the
/// kernel runs when they are and BLAS was found.
pub(crate) fn enable(allowed: bool) {
    // SAFETY: looks two symbols up once; no arguments.
    let available = unsafe { confab_cpu_linear_available() } == 1;
    ENABLED.store(allowed && available, Ordering::Relaxed);
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// What `CONFAB_CPU_ISA` may say: the widest instruction set the CPU kernels' tiles may use.
pub const ISA_VALUES: [&str; 3] = ["avx512", "avx2", "portable"];

/// The instruction set the CPU kernels' tiles use (linear and attention alike): `avx512`, `avx2`
/// or `portable` (plain C++, which the compiler vectorizes for the baseline: SSE2 on x86-64,
/// NEON on arm64). The widest this CPU runs, capped by `CONFAB_CPU_ISA` (`avx2` or
/// `portable`), so an AVX-512 machine can measure and test the narrower paths; read once.
pub fn instruction_set() -> &'static str {
    // SAFETY: no arguments; reads the CPU's features and the environment once.
    match unsafe { confab_cpu_isa() } {
        2 => "avx512",
        1 => "avx2",
        _ => "portable",
    }
}

/// How a quantized weight is stored: `weight` is packed into uint32 words, with `scales` per
/// group of `group_size` inputs.
pub struct Quantized<'a> {
    pub scales: &'a Array,
    pub group_size: i32,
    pub bits: i32,
    pub mode: QuantMode<'a>,
}

/// The quantization modes the kernel reads, as MLX names them.
pub enum QuantMode<'a> {
    /// `affine`: value = scale · q + bias per group; 4 or 8 bits, float scales and biases.
    Affine { biases: &'a Array },
    /// `mxfp4`: e2m1 values (4 bits, low nibble first) × 2^(scale − 127), one uint8 (e8m0) scale
    /// per 32 inputs, no biases.
    Mxfp4,
}

impl<'a> Quantized<'a> {
    /// MXFP4 as MLX's `mxfp4` mode stores it: weight uint32 [n, k / 8], scales uint8 [n, k / 32].
    pub fn mxfp4(scales: &'a Array) -> Self {
        Self { scales, group_size: 32, bits: 4, mode: QuantMode::Mxfp4 }
    }
}

/// Whether the kernel takes this input and weight (float activations; dense float weights,
/// affine 4/8-bit ones, or MXFP4).
pub fn supports(x: &Array, weight: &Array, quantized: Option<&Quantized>) -> bool {
    let float = |d: Dtype| matches!(d, Dtype::Float32 | Dtype::Bfloat16 | Dtype::Float16);
    let weight_ok = match quantized {
        None => float(weight.dtype()),
        Some(Quantized { bits, mode: QuantMode::Affine { .. }, .. }) => matches!(bits, 4 | 8) && weight.dtype() == Dtype::Uint32,
        Some(Quantized { scales, group_size, bits, mode: QuantMode::Mxfp4 }) => {
            (*group_size, *bits) == (32, 4) && weight.dtype() == Dtype::Uint32 && scales.dtype() == Dtype::Uint8
        }
    };
    enabled() && float(x.dtype()) && weight.ndim() == 2 && weight_ok
}

/// x [.., k] · weightᵀ → [.., n] in x's dtype; `weight` is [n, k] (packed when quantized).
pub fn linear(x: &Array, weight: &Array, quantized: Option<&Quantized>) -> Result<Array> {
    call(x, weight, quantized, 0, false)
}

/// As `linear`, but the result is float32 holding values rounded to x's precision: exactly
/// `linear(..).as_dtype(Float32)`, without the half-precision copy (for logits).
pub fn linear_f32(x: &Array, weight: &Array, quantized: Option<&Quantized>) -> Result<Array> {
    call(x, weight, quantized, 0, true)
}

/// A gated feed-forward's first half in one step: `weight` is the gate and up projections
/// stacked ([2·n, k]); the result is act(x · gateᵀ) · (x · upᵀ), [.., n], without the [.., 2·n]
/// projection ever being held in memory.
pub fn gated(x: &Array, weight: &Array, quantized: Option<&Quantized>, activation: Activation) -> Result<Array> {
    let gate = match activation {
        Activation::Silu => 1,
        Activation::GeluTanh => 2,
    };
    call(x, weight, quantized, gate, false)
}

fn call(x: &Array, weight: &Array, quantized: Option<&Quantized>, gate: c_int, float32_out: bool) -> Result<Array> {
    let ctx = |a: &Array| a.as_ptr().ctx;
    let (scales, biases, group, bits, mode) = match quantized {
        Some(q) => match q.mode {
            QuantMode::Affine { biases } => (ctx(q.scales), ctx(biases), q.group_size, q.bits, 0),
            QuantMode::Mxfp4 => (ctx(q.scales), std::ptr::null_mut(), q.group_size, q.bits, 1),
        },
        None => (std::ptr::null_mut(), std::ptr::null_mut(), 0, 0, 0),
    };
    let mut out: *mut c_void = std::ptr::null_mut();
    let mut err = [0 as c_char; 256];
    // SAFETY: the ctx pointers are live mlx::core::array objects owned by the borrowed Arrays;
    // on success `out` is a new heap array that `Array::from_ptr` takes ownership of.
    let status = unsafe {
        confab_cpu_linear(
            &mut out,
            ctx(x),
            ctx(weight),
            scales,
            biases,
            group,
            bits,
            mode,
            gate,
            float32_out as c_int,
            err.as_mut_ptr(),
            err.len(),
        )
    };
    if status != 0 || out.is_null() {
        // SAFETY: the kernel wrote a NUL-terminated message into `err`.
        let message = unsafe { std::ffi::CStr::from_ptr(err.as_ptr()) }.to_string_lossy().into_owned();
        return Err(EngineError::Internal(format!("cpu linear kernel: {message}")));
    }
    // SAFETY: `out` is an owned mlx::core::array*, exactly what an mlx_array's ctx holds.
    Ok(unsafe { Array::from_ptr(mlx_sys::mlx_array { ctx: out }) })
}
