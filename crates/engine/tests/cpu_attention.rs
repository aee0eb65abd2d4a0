//! The CPU attention kernel (native/cpu_attention.cpp) against MLX's scaled_dot_product_attention
//! on the same random inputs: grouped-query ratios 1, 3 and 8; head dims 64, 128 and 256;
//! 1, 7, 130 and 1,000 queries, starting at the first key or continuing a cache; causal with
//! and without a sliding window; keys and values read through the strides of a larger cache
//! buffer. The fidelity tests then hold whole models to the references.

use confab_engine::model::layers::mask::sliding_causal_mask;
use confab_engine::model::layers::cpu_attention::{self, Causal};
use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, random, Array, Dtype};

fn random(shape: &[i32], key: u64) -> Array {
    let key = random::key(key).unwrap();
    random::normal::<f32>(shape, None, None, Some(&key)).unwrap()
}

/// Largest |a - b|.
fn max_difference(a: &Array, b: &Array) -> f32 {
    assert_eq!(a.shape(), b.shape());
    ops::abs(ops::subtract(a, b).unwrap()).unwrap().max(None).unwrap().item_cast::<f32>()
}

/// MLX's attention with the mask as an array (query i at first_query + i sees keys up to
/// there, and with a window only the last `window`).
fn mlx_attention(q: &Array, k: &Array, v: &Array, scale: f32, mask: Causal) -> Array {
    let (l, t) = (q.dim(2) as usize, k.dim(2) as usize);
    let window = mask.window.unwrap_or(t + 1);
    let visible = sliding_causal_mask(mask.first_query, l, window, 0).unwrap();
    fast::scaled_dot_product_attention(q, k, v, scale, ScaledDotProductAttentionMask::Array(&visible), None).unwrap()
}

/// Scores are q·k/√d of unit normals (standard deviation 1, as in a trained model's layers);
/// outputs are averages of unit normals. Both sides sum in float32 in different orders, and
/// the kernel's e^x is within 2 ulp: 1e-5 absolute is ~30 float32 ulps at these magnitudes.
const TOLERANCE: f32 = 1e-5;

/// q [B, kv_heads × group, L, d] and a cache-like [B, kv_heads, capacity, d] buffer of which
/// the first `keys` positions are the keys (a strided view, as the engine's cache hands them
/// out).
fn case(b: i32, (kv_heads, group): (i32, i32), l: i32, keys: i32, d: i32, mask: Causal, seed: u64) {
    let heads = kv_heads * group;
    // q as the engine makes it: [B, L, heads, d] transposed.
    let q = random(&[b, l, heads, d], seed).transpose_axes(&[0, 2, 1, 3]).unwrap();
    let capacity = (keys + 255) / 256 * 256;
    let k_buffer = random(&[b, kv_heads, capacity, d], seed + 1);
    let v_buffer = random(&[b, kv_heads, capacity, d], seed + 2);
    let k = k_buffer.index((.., .., ..keys, ..));
    let v = v_buffer.index((.., .., ..keys, ..));
    let scale = 1.0 / (d as f32).sqrt();
    let ours = cpu_attention::causal(&q, &k, &v, scale, mask).unwrap();
    let theirs = mlx_attention(&q, &k, &v, scale, mask);
    assert_eq!(ours.shape(), &[b, heads, l, d]);
    assert_eq!(ours.dtype(), Dtype::Float32);
    let err = max_difference(&ours, &theirs);
    assert!(err < TOLERANCE, "B {b}, kv heads {kv_heads} × {group}, L {l}, keys {keys}, d {d}, {mask:?}: max difference {err}");
}

/// (queries, first query's position): a prompt from the start, a chunk continuing a cache, a
/// long prefill chunk, and decode steps over a short and a long cache (the long one splits its
/// keys over two cores).
const LENGTHS: [(i32, i32); 6] = [(7, 0), (7, 50), (130, 70), (1000, 0), (1, 40), (1, 999)];

#[test]
fn causal_matches_mlx_for_every_group_ratio_and_head_dim() {
    for (group, d) in [(1, 64), (3, 64), (8, 64), (3, 128), (8, 128), (1, 256), (3, 256)] {
        for (i, (l, first)) in LENGTHS.into_iter().enumerate() {
            let mask = Causal { first_query: first as usize, window: None };
            case(1, (3, group), l, first + l, d, mask, 10 * i as u64 + group as u64);
        }
    }
}

#[test]
fn sliding_window_matches_mlx() {
    for (group, d) in [(1, 64), (3, 128), (8, 256)] {
        for (l, first) in LENGTHS {
            for window in [1, 16, 100, 512] {
                case(1, (2, group), l, first + l, d, Causal { first_query: first as usize, window: Some(window) }, window as u64);
            }
        }
    }
}

#[test]
fn batches_and_many_groups_match_mlx() {
    // Two sequences; eight key/value heads (no two-way key split for a decode step).
    case(2, (2, 3), 33, 33, 64, Causal { first_query: 0, window: None }, 5);
    case(2, (8, 2), 1, 700, 64, Causal { first_query: 699, window: None }, 6);
    case(1, (8, 1), 130, 900, 128, Causal { first_query: 770, window: Some(300) }, 7);
}

#[test]
fn unmasked_matches_mlx() {
    let q = random(&[1, 6, 50, 64], 20);
    let k = random(&[1, 2, 77, 64], 21);
    let v = random(&[1, 2, 77, 64], 22);
    let ours = cpu_attention::unmasked(&q, &k, &v, 0.125).unwrap();
    let theirs = fast::scaled_dot_product_attention(&q, &k, &v, 0.125, None, None).unwrap();
    assert!(max_difference(&ours, &theirs) < TOLERANCE);
}

#[test]
fn values_with_a_strided_last_axis_are_read_correctly() {
    // [B, kv, T, d] from a [B, kv, d, T] buffer: the last axis is not contiguous.
    let q = random(&[1, 4, 9, 64], 30);
    let k = random(&[1, 2, 64, 40], 31).transpose_axes(&[0, 1, 3, 2]).unwrap();
    let v = random(&[1, 2, 64, 40], 32).transpose_axes(&[0, 1, 3, 2]).unwrap();
    let mask = Causal { first_query: 31, window: None };
    let ours = cpu_attention::causal(&q, &k, &v, 0.125, mask).unwrap();
    assert!(max_difference(&ours, &mlx_attention(&q, &k, &v, 0.125, mask)) < TOLERANCE);
}

#[test]
fn inputs_it_cannot_take_are_errors_not_crashes() {
    let q = random(&[1, 4, 3, 64], 40);
    let k = random(&[1, 2, 3, 64], 41);
    let mask = Causal { first_query: 0, window: None };
    let half = q.as_dtype(Dtype::Float16).unwrap();
    for (what, result) in [
        ("half precision", cpu_attention::causal(&half, &k, &k, 1.0, mask)),
        ("heads not a multiple of kv heads", cpu_attention::causal(&random(&[1, 3, 3, 64], 42), &k, &k, 1.0, mask)),
        ("head dim not a multiple of 16", cpu_attention::causal(&random(&[1, 4, 3, 40], 43), &random(&[1, 2, 3, 40], 44), &random(&[1, 2, 3, 40], 45), 1.0, mask)),
        ("values unlike keys", cpu_attention::causal(&q, &k, &random(&[1, 2, 5, 64], 46), 1.0, mask)),
    ] {
        let err = result.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(err.to_string().contains("cpu attention kernel"), "{what}: {err}");
    }
    assert!(!cpu_attention::supports(&half, &k));
}

/// Not a test: prints the kernel's and MLX's time for SmolLM2-135M's attention shapes (9 query
/// heads over 3 key/value heads, d 64), one layer. Speed is compared, never asserted.
/// `cargo test -p confab-engine --test cpu_attention -- --ignored --nocapture`
#[test]
#[ignore]
fn speed_against_mlx() {
    use std::time::Instant;
    let time = |f: &dyn Fn() -> Array| {
        f().eval().unwrap();
        let mut best = f64::MAX;
        for _ in 0..3 {
            let start = Instant::now();
            f().eval().unwrap();
            best = best.min(start.elapsed().as_secs_f64());
        }
        best * 1e3
    };
    // (what, queries, keys): a 512-token prefill chunk at the end of a 4,096-token prompt, a
    // 30-token turn over a 3,000-token history, decode steps over 1,024 and 4,096 keys.
    for (what, l, t) in [("prefill chunk", 512, 4096), ("30-token turn", 30, 3030), ("decode", 1, 1024), ("decode", 1, 4096)] {
        let q = random(&[1, 9, l, 64], 1);
        let k = random(&[1, 3, t, 64], 2);
        let v = random(&[1, 3, t, 64], 3);
        let mask = Causal { first_query: (t - l) as usize, window: None };
        let ours = time(&|| cpu_attention::causal(&q, &k, &v, 0.125, mask).unwrap());
        let theirs = time(&|| {
            if l > 1 {
                fast::scaled_dot_product_attention(&q, &k, &v, 0.125, ScaledDotProductAttentionMask::Causal, None).unwrap()
            } else {
                fast::scaled_dot_product_attention(&q, &k, &v, 0.125, None, None).unwrap()
            }
        });
        println!("{what:>14} L {l:>4} over {t:>4} keys: kernel {ours:8.2} ms, MLX {theirs:8.2} ms ({:.1}x)", theirs / ours);
    }
}
