//! The CPU linear kernel (native/cpu_linear.cpp) against MLX's own ops on the same inputs:
//! dense float32/bfloat16/float16 and 4/8-bit weights, one row (decode) and several (prefill),
//! plain and gated (silu, gelu). The fidelity tests then hold whole models to the references.

use confab_engine::model::config::Activation;
use confab_engine::model::layers::cpu_linear::{self, Quantized};
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
            let layout = Quantized { scales: &scales, biases: &biases, group_size: group, bits };
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
    let layout = Quantized { scales: &scales, biases: &biases, group_size: 32, bits: 4 };
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
            let layout = Quantized { scales: &scales, biases: &biases, group_size: 64, bits: 4 };
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
    let layout = Quantized { scales: &scales, biases: &biases, group_size: 64, bits: 4 };
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
