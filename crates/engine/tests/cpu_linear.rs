//! The CPU linear kernel (native/cpu_linear.cpp) against MLX's own ops on the same inputs:
//! dense float32/bfloat16/float16 and 4/8-bit weights, one row (decode) and several (prefill),
//! plain and gated (silu, gelu); MXFP4 weights (MLX's `mxfp4` mode), alone and as a MoE's
//! experts. The fidelity tests then hold whole models to the references.

use confab_engine::model::config::Activation;
use confab_engine::model::layers::cpu_linear::{self, QuantMode, Quantized};
use confab_engine::model::layers::mxfp4_experts;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{nn, ops, random, Array, Dtype};

mod every_isa;

/// Every test below again on the narrower tiles (AVX2, portable), in child processes.
#[test]
fn every_test_again_on_the_narrower_instruction_sets() {
    every_isa::rerun_on_narrower_instruction_sets();
}

fn random(shape: &[i32], key: u64) -> Array {
    let key = random::key(key).unwrap();
    random::normal::<f32>(shape, None, None, Some(&key)).unwrap()
}

/// Largest |a - b| relative to the largest |b|.
fn relative_error(a: &Array, b: &Array) -> f32 {
    let (a, b) = (a.as_dtype(Dtype::Float32).unwrap(), b.as_dtype(Dtype::Float32).unwrap());
    assert_eq!(a.shape(), b.shape());
    let diff = ops::abs(ops::subtract(&a, &b).unwrap()).unwrap().max(None).unwrap().item_cast::<f32>();
    diff / ops::abs(&b).unwrap().max(None).unwrap().item_cast::<f32>()
}

/// x · wᵀ in float32 (exact products of half-precision inputs, float32 sums).
fn matmul_f32(x: &Array, w: &Array) -> Array {
    ops::matmul(x.as_dtype(Dtype::Float32).unwrap(), w.as_dtype(Dtype::Float32).unwrap().t()).unwrap()
}

fn reference_gate(y: &Array, n: i32, activation: Activation) -> Array {
    let parts = y.split_at_indices(&[n], -1).unwrap();
    let g = match activation {
        Activation::Silu => nn::silu(&parts[0]).unwrap(),
        Activation::GeluTanh => nn::gelu_approximate(&parts[0]).unwrap(),
    };
    ops::multiply(&g, &parts[1]).unwrap()
}

// [batch, rows]: a decode step, a few rows, a prompt chunk taken block by block (over more than
// one slice of x rows), and one past that (float32 weights then go to sgemm).
const SHAPES: [(i32, i32); 4] = [(1, 1), (3, 7), (2, 150), (1, 600)];

#[test]
fn dense_float32_matches_mlx_matmul() {
    for (b, l) in SHAPES {
        let x = random(&[b, l, 192], 1);
        let w = random(&[320, 192], 2);
        let ours = cpu_linear::linear(&x, &w, None).unwrap();
        let theirs = ops::matmul(&x, w.t()).unwrap();
        assert_eq!(ours.dtype(), Dtype::Float32);
        let err = relative_error(&ours, &theirs);
        assert!(err < 1e-5, "[{b}, {l}]: relative error {err}");
    }
}

#[test]
fn half_precision_weights_match_mlx_within_one_rounding() {
    for dtype in [Dtype::Bfloat16, Dtype::Float16] {
        for (b, l) in SHAPES {
            let x = random(&[b, l, 256], 3).as_dtype(dtype).unwrap();
            let w = random(&[96, 256], 4).as_dtype(dtype).unwrap();
            let ours = cpu_linear::linear(&x, &w, None).unwrap();
            assert_eq!(ours.dtype(), dtype);
            // MLX accumulates in float32 too; both round once to the output type.
            let exact = matmul_f32(&x, &w);
            let err = relative_error(&ours, &exact);
            let bound = if dtype == Dtype::Bfloat16 { 8e-3 } else { 1e-3 };
            assert!(err < bound, "{dtype:?} [{b}, {l}]: relative error {err}");
            let err_mlx = relative_error(&ours, &ops::matmul(&x, w.t()).unwrap());
            assert!(err_mlx < 2.0 * bound, "{dtype:?} [{b}, {l}]: relative error against MLX {err_mlx}");
        }
    }
}

#[test]
fn quantized_weights_match_mlx_quantized_matmul() {
    for bits in [4, 8] {
        for group in [32, 64] {
            let w = random(&[160, 256], 5);
            let (packed, scales, biases) = ops::quantize(&w, group, bits).unwrap();
            let layout = Quantized { scales: &scales, group_size: group, bits, mode: QuantMode::Affine { biases: &biases } };
            for (b, l) in SHAPES {
                let x = random(&[b, l, 256], 6);
                let ours = cpu_linear::linear(&x, &packed, Some(&layout)).unwrap();
                let theirs = ops::quantized_matmul(&x, &packed, &scales, Some(&biases), true, group, bits).unwrap();
                let err = relative_error(&ours, &theirs);
                assert!(err < 2e-5, "{bits}-bit group {group} [{b}, {l}]: relative error {err}");
            }
        }
    }
}

#[test]
fn quantized_weights_with_half_precision_scales_match_mlx() {
    // Scales and biases in bfloat16, as a bfloat16 checkpoint quantizes to; x in float32.
    let w = random(&[96, 256], 15).as_dtype(Dtype::Bfloat16).unwrap();
    let (packed, scales, biases) = ops::quantize(&w, 32, 4).unwrap();
    assert_eq!(scales.dtype(), Dtype::Bfloat16);
    let layout = Quantized { scales: &scales, group_size: 32, bits: 4, mode: QuantMode::Affine { biases: &biases } };
    for (b, l) in SHAPES {
        let x = random(&[b, l, 256], 16);
        let ours = cpu_linear::linear(&x, &packed, Some(&layout)).unwrap();
        let (s, z) = (scales.as_dtype(Dtype::Float32).unwrap(), biases.as_dtype(Dtype::Float32).unwrap());
        let theirs = ops::quantized_matmul(&x, &packed, &s, Some(&z), true, 32, 4).unwrap();
        let err = relative_error(&ours, &theirs);
        assert!(err < 2e-5, "[{b}, {l}]: relative error {err}");
    }
}

#[test]
fn gated_projection_matches_act_gate_times_up() {
    for activation in [Activation::Silu, Activation::GeluTanh] {
        for (b, l) in SHAPES {
            let x = random(&[b, l, 128], 7);
            let w = random(&[2 * 80, 128], 8);
            let ours = cpu_linear::gated(&x, &w, None, activation).unwrap();
            let theirs = reference_gate(&ops::matmul(&x, w.t()).unwrap(), 80, activation);
            let err = relative_error(&ours, &theirs);
            assert!(err < 1e-5, "{activation:?} [{b}, {l}]: relative error {err}");

            let (packed, scales, biases) = ops::quantize(&w, 64, 4).unwrap();
            let layout = Quantized { scales: &scales, group_size: 64, bits: 4, mode: QuantMode::Affine { biases: &biases } };
            let ours = cpu_linear::gated(&x, &packed, Some(&layout), activation).unwrap();
            let y = ops::quantized_matmul(&x, &packed, &scales, Some(&biases), true, 64, 4).unwrap();
            let err = relative_error(&ours, &reference_gate(&y, 80, activation));
            assert!(err < 2e-5, "{activation:?} 4-bit [{b}, {l}]: relative error {err}");

            let (xb, wb) = (x.as_dtype(Dtype::Bfloat16).unwrap(), w.as_dtype(Dtype::Bfloat16).unwrap());
            let ours = cpu_linear::gated(&xb, &wb, None, activation).unwrap();
            assert_eq!(ours.dtype(), Dtype::Bfloat16);
            let exact = reference_gate(&matmul_f32(&xb, &wb), 80, activation);
            let err = relative_error(&ours, &exact);
            assert!(err < 8e-3, "{activation:?} bf16 [{b}, {l}]: relative error {err}");
        }
    }
}

#[test]
fn large_weights_cross_block_boundaries() {
    // More rows than one widened block holds, and an odd count, in every path.
    let x = random(&[1, 5, 576], 9);
    let w = random(&[1000, 576], 10);
    let (packed, scales, biases) = ops::quantize(&w, 64, 4).unwrap();
    let layout = Quantized { scales: &scales, group_size: 64, bits: 4, mode: QuantMode::Affine { biases: &biases } };
    for rows in [1, 5] {
        let xr = x.index((.., ..rows, ..));
        let ours = cpu_linear::linear(&xr, &packed, Some(&layout)).unwrap();
        let theirs = ops::quantized_matmul(&xr, &packed, &scales, Some(&biases), true, 64, 4).unwrap();
        assert!(relative_error(&ours, &theirs) < 2e-5);
        let wb = w.as_dtype(Dtype::Bfloat16).unwrap();
        let xb = xr.as_dtype(Dtype::Bfloat16).unwrap();
        let ours = cpu_linear::gated(&xb, &wb, None, Activation::Silu).unwrap();
        let exact = reference_gate(&matmul_f32(&xb, &wb), 500, Activation::Silu);
        assert!(relative_error(&ours, &exact) < 8e-3);
    }
}

#[test]
fn bad_layouts_are_errors_not_crashes() {
    let x = random(&[1, 1, 64], 11);
    let w = random(&[32, 48], 12); // k mismatch
    let err = cpu_linear::linear(&x, &w, None).unwrap_err().to_string();
    assert!(err.contains("cpu linear kernel"), "{err}");
    let odd = random(&[33, 64], 13);
    assert!(cpu_linear::gated(&x, &odd, None, Activation::Silu).is_err());
}

#[test]
fn float32_logits_equal_the_half_precision_output_widened() {
    let x = random(&[1, 1, 192], 14).as_dtype(Dtype::Bfloat16).unwrap();
    let w = random(&[5000, 192], 15).as_dtype(Dtype::Bfloat16).unwrap();
    let wide = cpu_linear::linear_f32(&x, &w, None).unwrap();
    assert_eq!(wide.dtype(), Dtype::Float32);
    let narrow = cpu_linear::linear(&x, &w, None).unwrap().as_dtype(Dtype::Float32).unwrap();
    assert_eq!(relative_error(&wide, &narrow), 0.0);
}

#[test]
fn a_rows_result_is_the_same_alone_or_among_a_few() {
    // Decode steps batched with others must give a sequence the logits it gets alone, bit for
    // bit (float32 weights): the one-row and few-row paths sum every output in the same order.
    // Odd sizes: k not a multiple of any vector width, n not a multiple of the tile.
    let (k, n) = (203, 157);
    let w = random(&[n, k], 16);
    let x = random(&[32, k], 17);
    let plain = cpu_linear::linear(&x, &w, None).unwrap();
    assert!(relative_error(&plain, &ops::matmul(&x, w.t()).unwrap()) < 1e-5);
    let gate = random(&[2 * n, k], 18);
    for m in [2, 3, 5, 8, 13, 32] {
        let few = x.index((..m, ..));
        let together = cpu_linear::linear(&few, &w, None).unwrap();
        let gated_together = cpu_linear::gated(&few, &gate, None, Activation::Silu).unwrap();
        for row in [0, m - 1] {
            let alone = cpu_linear::linear(&few.index((row..row + 1, ..)), &w, None).unwrap();
            assert_eq!(relative_error(&alone, &together.index((row..row + 1, ..))), 0.0, "m={m} row={row}");
            let gated_alone = cpu_linear::gated(&few.index((row..row + 1, ..)), &gate, None, Activation::Silu).unwrap();
            assert_eq!(relative_error(&gated_alone, &gated_together.index((row..row + 1, ..))), 0.0, "gated m={m} row={row}");
        }
        assert!(relative_error(&together, &ops::matmul(&few, w.t()).unwrap()) < 1e-5, "m={m}");
    }
}

#[test]
fn a_rows_result_is_the_same_alone_or_among_a_few_on_packed_weights() {
    // A verifying pass (up to 16 positions) on 4/8-bit weights shares each group's widening
    // among its rows; every row must still get the logits it gets alone, bit for bit.
    let (k, n) = (256, 203);
    let w = random(&[n, k], 19);
    let x = random(&[16, k], 20);
    for (bits, group) in [(4, 32), (4, 64), (8, 32), (8, 64)] {
        let (packed, scales, biases) = ops::quantize(&w, group, bits).unwrap();
        let layout = Quantized { scales: &scales, group_size: group, bits, mode: QuantMode::Affine { biases: &biases } };
        for m in [2, 3, 4, 5, 7, 8, 13, 16] {
            let few = x.index((..m, ..));
            let together = cpu_linear::linear(&few, &packed, Some(&layout)).unwrap();
            for row in 0..m {
                let alone = cpu_linear::linear(&few.index((row..row + 1, ..)), &packed, Some(&layout)).unwrap();
                let err = relative_error(&alone, &together.index((row..row + 1, ..)));
                assert_eq!(err, 0.0, "{bits}-bit group {group} m={m} row={row}");
            }
            let theirs = ops::quantized_matmul(&few, &packed, &scales, Some(&biases), true, group, bits).unwrap();
            let err = relative_error(&together, &theirs);
            assert!(err < 2e-5, "{bits}-bit group {group} m={m}: relative error {err}");
        }
    }
}

/// Random MXFP4 weights for `n` outputs of `k` inputs, as MLX's `mxfp4` mode stores them: any
/// nibbles (every e2m1 value, both zeros), scales 2^-7 .. 2^3.
fn random_mxfp4(leading: &[i32], n: i32, k: i32, seed: u64) -> (Array, Array) {
    let mut state = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
    let mut next = move || {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (state >> 32) as u32
    };
    let rows: i32 = leading.iter().product::<i32>() * n;
    let words: Vec<u32> = (0..rows * k / 8).map(|_| next()).collect();
    let scales: Vec<u8> = (0..rows * k / 32).map(|_| 120 + (next() % 11) as u8).collect();
    let shape = |last: i32| leading.iter().copied().chain([n, last]).collect::<Vec<i32>>();
    (Array::from_slice(&words, &shape(k / 8)), Array::from_slice(&scales, &shape(k / 32)))
}

/// MLX's `quantized_matmul` in `mxfp4` mode (mlx-rs passes only the affine mode).
fn mlx_mxfp4_matmul(x: &Array, w: &Array, scales: &Array) -> Array {
    let mode = std::ffi::CString::new("mxfp4").unwrap();
    let optional = |value: i32| mlx_sys::mlx_optional_int_ { value, has_value: true };
    let stream = mlx_rs::Stream::default();
    // SAFETY: live borrowed arrays; `out` is a new array owned by the returned Array.
    unsafe {
        let no_biases = mlx_sys::mlx_array_new();
        let mut out = mlx_sys::mlx_array_new();
        let status = mlx_sys::mlx_quantized_matmul(
            &mut out,
            x.as_ptr(),
            w.as_ptr(),
            scales.as_ptr(),
            no_biases,
            true,
            optional(32),
            optional(4),
            mode.as_ptr(),
            stream.as_ptr(),
        );
        mlx_sys::mlx_array_free(no_biases);
        assert_eq!(status, 0, "MLX's quantized_matmul refused mxfp4");
        Array::from_ptr(out)
    }
}

#[test]
fn mxfp4_weights_match_mlx_quantized_matmul() {
    // Uneven shapes: n not a multiple of the tiles, k an odd count of groups. MLX sums the same
    // float32 products in another order: float32 x within 2e-5 of the largest output; bfloat16
    // x and output within 8e-3 of the exact product (one bfloat16 rounding), and no further
    // from it than MLX's own bfloat16 result.
    confab_engine::model::layers::enable_cpu_kernels(true);
    for (n, k, seed) in [(37, 96, 20), (203, 224, 21)] {
        let (w, scales) = random_mxfp4(&[], n, k, seed);
        let layout = Quantized::mxfp4(&scales);
        for (b, l) in SHAPES {
            let x = random(&[b, l, k], seed + 100);
            assert!(cpu_linear::supports(&x, &w, Some(&layout)));
            let ours = cpu_linear::linear(&x, &w, Some(&layout)).unwrap();
            let theirs = mlx_mxfp4_matmul(&x, &w, &scales);
            let err = relative_error(&ours, &theirs);
            assert!(err < 2e-5, "mxfp4 [{n}, {k}] x [{b}, {l}]: relative error {err}");

            let xb = x.as_dtype(Dtype::Bfloat16).unwrap();
            let ours = cpu_linear::linear(&xb, &w, Some(&layout)).unwrap();
            assert_eq!(ours.dtype(), Dtype::Bfloat16);
            // MLX's bfloat16 path strays up to about 1.2e-2 from the exact product (its own
            // sums are less precise), so bfloat16 is held to the exact float32 product of the
            // same bfloat16 inputs (MLX's float32 path, checked above), rounded once.
            let exact = mlx_mxfp4_matmul(&xb.as_dtype(Dtype::Float32).unwrap(), &w, &scales);
            let err = relative_error(&ours, &exact);
            assert!(err < 8e-3, "mxfp4 bf16 [{n}, {k}] x [{b}, {l}]: relative error {err}");
            let mlx_err = relative_error(&mlx_mxfp4_matmul(&xb, &w, &scales), &exact);
            assert!(err <= mlx_err + 1e-6, "mxfp4 bf16 [{n}, {k}] x [{b}, {l}]: ours {err}, MLX's {mlx_err}");
        }
    }
}

#[test]
fn mxfp4_experts_match_mlx_gather_qmm() {
    // Five experts, two chosen per token (repeats across tokens), as gpt-oss's gate_up (one x
    // row per token) and down (one row per token and choice) call them.
    // `gather` takes our kernel only when the CPU kernels are on (and BLAS was found).
    confab_engine::model::layers::enable_cpu_kernels(true);
    assert!(cpu_linear::enabled(), "the CPU kernels are off: the test would compare gather_qmm with itself");
    let (experts, choices, k, n) = (5, 2, 96, 70);
    let (w, scales) = random_mxfp4(&[experts], n, k, 30);
    for tokens in [1, 3, 40] {
        let picks: Vec<u32> = (0..tokens * choices).map(|i| ((i * 7 + i / 3) % experts) as u32).collect();
        let picks = Array::from_slice(&picks, &[tokens, choices]);
        for per_token in [1, choices] {
            let x = random(&[tokens, per_token, 1, k], 31);
            let ours = mxfp4_experts::gather(&x, &w, &scales, &picks).unwrap();
            let theirs = mxfp4_experts::gather_qmm(&x, &w, &scales, &picks).unwrap();
            assert_eq!(ours.shape(), theirs.shape());
            let err = relative_error(&ours, &theirs);
            assert!(err < 2e-5, "{tokens} tokens, {per_token} rows each: relative error {err}");
        }
    }
}

#[test]
fn bad_mxfp4_layouts_are_errors_not_crashes() {
    let x = random(&[1, 1, 96], 40);
    let (w, scales) = random_mxfp4(&[], 16, 96, 41);
    // Float scales are not e8m0 bytes; scales for the wrong count of groups.
    let float_scales = scales.as_dtype(Dtype::Float32).unwrap();
    assert!(!cpu_linear::supports(&x, &w, Some(&Quantized::mxfp4(&float_scales))));
    assert!(cpu_linear::linear(&x, &w, Some(&Quantized::mxfp4(&float_scales))).is_err());
    let short = scales.index((.., ..2));
    let err = cpu_linear::linear(&x, &w, Some(&Quantized::mxfp4(&short))).unwrap_err().to_string();
    assert!(err.contains("MXFP4"), "{err}");
}

#[test]
fn mxfp4_at_gpt_oss_20b_widths_matches_mlx_quantized_matmul() {
    // gpt-oss-20b's experts: gate_up [5760, 2880] and down [2880, 2880]. At these widths the
    // blocks of W's rows go to the pool's threads (the small shapes above run on the caller
    // alone). A decode step (1 row) and a few tokens routed to one expert (16 rows: more than
    // one slice of widened bfloat16 x rows), float32 and bfloat16 x; tolerances as above.
    confab_engine::model::layers::enable_cpu_kernels(true);
    for (n, k, seed) in [(5760, 2880, 50), (2880, 2880, 51)] {
        let (w, scales) = random_mxfp4(&[], n, k, seed);
        let layout = Quantized::mxfp4(&scales);
        for m in [1, 16] {
            let x = random(&[1, m, k], seed + 100);
            let ours = cpu_linear::linear(&x, &w, Some(&layout)).unwrap();
            let err = relative_error(&ours, &mlx_mxfp4_matmul(&x, &w, &scales));
            assert!(err < 2e-5, "mxfp4 [{n}, {k}] x [{m}]: relative error {err}");

            let xb = x.as_dtype(Dtype::Bfloat16).unwrap();
            let ours = cpu_linear::linear(&xb, &w, Some(&layout)).unwrap();
            let exact = mlx_mxfp4_matmul(&xb.as_dtype(Dtype::Float32).unwrap(), &w, &scales);
            let err = relative_error(&ours, &exact);
            assert!(err < 8e-3, "mxfp4 bf16 [{n}, {k}] x [{m}]: relative error {err}");
            let mlx_err = relative_error(&mlx_mxfp4_matmul(&xb, &w, &scales), &exact);
            assert!(err <= mlx_err + 1e-6, "mxfp4 bf16 [{n}, {k}] x [{m}]: ours {err}, MLX's {mlx_err}");
        }
    }
}

#[test]
fn mxfp4_experts_at_gpt_oss_20b_widths_match_mlx_gather_qmm() {
    // gpt-oss-20b's gate_up (2880 → 5760, one x row per token) and down (2880 → 2880, a row per
    // token and choice), 4 of 8 experts a token, a decode step and a 16-token prompt, bfloat16
    // as the model runs on the CPU: within one bfloat16 rounding of the exact product, and no
    // further from it than MLX's own.
    confab_engine::model::layers::enable_cpu_kernels(true);
    let (experts, choices) = (8, 4);
    for (n, k, per_token, seed) in [(5760, 2880, 1, 60), (2880, 2880, choices, 61)] {
        let (w, scales) = random_mxfp4(&[experts], n, k, seed);
        for tokens in [1, 16] {
            let picks: Vec<u32> = (0..tokens * choices).map(|i| ((i * 5 + i / 4) % experts) as u32).collect();
            let picks = Array::from_slice(&picks, &[tokens, choices]);
            let x = random(&[tokens, per_token, 1, k], seed + 100).as_dtype(Dtype::Bfloat16).unwrap();
            let ours = mxfp4_experts::gather(&x, &w, &scales, &picks).unwrap();
            let exact = mxfp4_experts::gather_qmm(&x.as_dtype(Dtype::Float32).unwrap(), &w, &scales, &picks).unwrap();
            assert_eq!(ours.shape(), exact.shape());
            let err = relative_error(&ours, &exact);
            assert!(err < 8e-3, "[{n}, {k}], {tokens} tokens: relative error {err}");
            let mlx_err = relative_error(&mxfp4_experts::gather_qmm(&x, &w, &scales, &picks).unwrap(), &exact);
            assert!(err <= mlx_err + 1e-6, "[{n}, {k}], {tokens} tokens: ours {err}, MLX's {mlx_err}");
        }
    }
}

#[test]
fn a_queued_product_has_run_once_the_streams_are_waited_for() {
    // The engine thread's last act (`device::wait_for_streams`): a pipelined decode step still
    // running when the process exits would take its scratch from an MLX allocator already torn
    // down (a SIGSEGV at exit, bench/mxfp4_experts.py at gpt-oss-20b's widths).
    confab_engine::model::layers::enable_cpu_kernels(true);
    let (w, scales) = random_mxfp4(&[], 5760, 2880, 70);
    let x = random(&[16, 2880], 71);
    let y = cpu_linear::linear(&x, &w, Some(&Quantized::mxfp4(&scales))).unwrap();
    mlx_rs::transforms::async_eval([&y]).unwrap();
    confab_engine::device::wait_for_streams();
    let mut available = false;
    // SAFETY: `y` is a live array; the call only reads its status.
    assert_eq!(unsafe { mlx_sys::_mlx_array_is_available(&mut available, y.as_ptr()) }, 0);
    assert!(available, "the product was still queued after wait_for_streams");
}
