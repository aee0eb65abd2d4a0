//! The CPU attention kernel (native/cpu_attention.cpp) against MLX's scaled_dot_product_attention
//! on the same random inputs: grouped-query ratios 1, 3 and 8; head dims 64, 128 and 256 (the
//! 16-float loops on an AVX-512 CPU) and 48 and 80 (the 8-float loops, which every CPU runs);
//! 1, 7, 130 and 1,000 queries, starting at the first key or continuing a cache; causal with
//! and without a sliding window; keys and values read through the strides of a larger cache
//! buffer. The fidelity tests then hold whole models to the references.

use confab_engine::model::config::{RopeConfig, RopeScaling};
use confab_engine::model::layers::cpu_attention::{self, Causal};
use confab_engine::model::layers::mask::sliding_causal_mask;
use confab_engine::model::layers::Rope;
use mlx_rs::fast::{self, ScaledDotProductAttentionMask};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, random, Array, Dtype};

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
    for (group, d) in [(1, 64), (3, 64), (8, 64), (3, 128), (8, 128), (1, 256), (3, 256), (3, 48), (8, 80)] {
        for (i, (l, first)) in LENGTHS.into_iter().enumerate() {
            let mask = Causal { first_query: first as usize, window: None };
            case(1, (3, group), l, first + l, d, mask, 10 * i as u64 + group as u64);
        }
    }
}

#[test]
fn sliding_window_matches_mlx() {
    for (group, d) in [(1, 64), (3, 128), (8, 256), (3, 48)] {
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
        (
            "head dim not a multiple of 16",
            cpu_attention::causal(&random(&[1, 4, 3, 40], 43), &random(&[1, 2, 3, 40], 44), &random(&[1, 2, 3, 40], 45), 1.0, mask),
        ),
        ("values unlike keys", cpu_attention::causal(&q, &k, &random(&[1, 2, 5, 64], 46), 1.0, mask)),
    ] {
        let err = result.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(err.to_string().contains("cpu attention kernel"), "{what}: {err}");
    }
    assert!(!cpu_attention::supports(&half, &k));
}

/// A decode step's query for `rows` rows as the engine hands it over: the first `heads × d`
/// columns of a fused q/k/v projection [B, 1, (heads + 2 kv_heads) × d] (a strided view).
fn fused_query(rows: i32, heads: i32, kv_heads: i32, d: i32, seed: u64) -> Array {
    random(&[rows, 1, (heads + 2 * kv_heads) * d], seed).index((.., .., ..heads * d))
}

/// Unit-normal features times a cos or sin an ulp (6e-8) off: a few 1e-7 at most.
const ROPE_TOLERANCE: f32 = 1e-6;

fn plain_rope(d: usize) -> Rope {
    Rope::new(d, &RopeConfig { theta: 100000.0, scaling: RopeScaling::None }, false)
}

/// The decode kernel: rows of one query each, every row over its own cache buffer (their
/// capacities differ) up to its own length, q rotated inside. Each row is held to MLX alone:
/// `Rope::forward` (fast::rope) at the row's position, then scaled_dot_product_attention over
/// that row's keys.
fn decode_case(lens: &[i32], (kv_heads, group): (i32, i32), d: i32, seed: u64) {
    let (rows, heads) = (lens.len() as i32, kv_heads * group);
    let rope = plain_rope(d as usize);
    let q = fused_query(rows, heads, kv_heads, d, seed);
    let buffers: Vec<(Array, Array)> = lens
        .iter()
        .enumerate()
        .map(|(b, &len)| {
            let capacity = (len + 255) / 256 * 256 + 256 * (b as i32 % 2);
            (random(&[1, kv_heads, capacity, d], seed + 10 + b as u64), random(&[1, kv_heads, capacity, d], seed + 50 + b as u64))
        })
        .collect();
    let keys: Vec<Array> = buffers.iter().map(|(k, _)| k.clone()).collect();
    let values: Vec<Array> = buffers.iter().map(|(_, v)| v.clone()).collect();
    let lengths: Vec<usize> = lens.iter().map(|&l| l as usize).collect();
    let scale = 1.0 / (d as f32).sqrt();
    let ours = cpu_attention::decode_attention(&q, &keys, &values, &lengths, heads as usize, scale, rope.table()).unwrap();
    assert_eq!(ours.shape(), &[rows, 1, heads * d]);
    for (b, &len) in lens.iter().enumerate() {
        let row = b as i32..b as i32 + 1;
        let qb = q.index((row.clone(), .., ..)).reshape(&[1, 1, heads, d]).unwrap().transpose_axes(&[0, 2, 1, 3]).unwrap();
        let qb = rope.forward(&qb, len as usize - 1).unwrap();
        let kb = keys[b].index((.., .., ..len, ..));
        let vb = values[b].index((.., .., ..len, ..));
        let theirs = fast::scaled_dot_product_attention(&qb, &kb, &vb, scale, None, None).unwrap();
        let theirs = theirs.transpose_axes(&[0, 2, 1, 3]).unwrap().reshape(&[1, 1, heads * d]).unwrap();
        let err = max_difference(&ours.index((row, .., ..)), &theirs);
        assert!(err < TOLERANCE, "row {b} of {lens:?}, kv heads {kv_heads} × {group}, d {d}: max difference {err}");
    }
}

#[test]
fn decode_rows_match_mlx_row_by_row() {
    // Ragged lengths: one key, a short cache, one past a buffer step, and long ones whose keys
    // split over two cores.
    let lens = [1, 40, 257, 700, 5, 1500];
    for (group, d) in [(1, 64), (3, 64), (8, 64), (3, 128), (8, 128)] {
        decode_case(&lens, (3, group), d, 100 + group as u64 + d as u64);
    }
    // One row, and eight key/value heads.
    decode_case(&[33], (3, 3), 64, 7);
    decode_case(&[600, 2], (8, 2), 64, 8);
}

/// A verifying pass: rows that are one sequence's consecutive positions, all reading the same
/// cache buffer up to their own lengths, each bit for bit the decode step at its position
/// alone. Lengths that cross a key block and the two-way key split, with another sequence's
/// row among them.
#[test]
fn rows_sharing_a_cache_give_what_each_gives_alone() {
    for (group, d, first) in [(3, 64, 60), (3, 64, 505), (8, 128, 1000), (1, 64, 1)] {
        let (kv_heads, positions) = (3, 16);
        let heads = kv_heads * group;
        let rope = plain_rope(d as usize);
        let capacity = 1280;
        let (k, v) = (random(&[1, kv_heads, capacity, d], 31 + first as u64), random(&[1, kv_heads, capacity, d], 77));
        let (other_k, other_v) = (random(&[1, kv_heads, 512, d], 5), random(&[1, kv_heads, 512, d], 6));
        let rows = positions + 1;
        let q = fused_query(rows as i32, heads, kv_heads, d, 200 + d as u64);
        let mut keys: Vec<Array> = (0..positions).map(|_| k.clone()).collect();
        let mut values: Vec<Array> = (0..positions).map(|_| v.clone()).collect();
        let mut lens: Vec<usize> = (0..positions).map(|j| first + j).collect();
        keys.insert(5, other_k.clone());
        values.insert(5, other_v.clone());
        lens.insert(5, 300);
        let scale = 1.0 / (d as f32).sqrt();
        let together = cpu_attention::decode_attention(&q, &keys, &values, &lens, heads as usize, scale, rope.table()).unwrap();
        for row in 0..rows {
            let i = row as i32;
            let alone = cpu_attention::decode_attention(
                &q.index((i..i + 1, .., ..)),
                &keys[row..row + 1],
                &values[row..row + 1],
                &lens[row..row + 1],
                heads as usize,
                scale,
                rope.table(),
            )
            .unwrap();
            let (a, b) = (together.index((i..i + 1, .., ..)), alone);
            let bits = |x: &Array| -> Vec<u32> {
                let flat = ops::flatten(x, None, None).unwrap();
                flat.eval().unwrap();
                flat.as_slice::<f32>().iter().map(|f| f.to_bits()).collect()
            };
            assert!(bits(&a) == bits(&b), "row {row} (length {}), group {group}, d {d}: differs by {}", lens[row], max_difference(&a, &b));
        }
    }
}

/// The RoPE variants checkpoints use: plain, positions scaled, `llama3` periods, the
/// traditional pair layout, and rotating only part of each head.
fn ropes(d: usize) -> Vec<(&'static str, Rope)> {
    let config = |scaling| RopeConfig { theta: 10000.0, scaling };
    let llama3 = RopeScaling::Llama3 { factor: 8.0, low_freq_factor: 1.0, high_freq_factor: 4.0, original_max_position: 8192.0 };
    vec![
        ("plain", plain_rope(d)),
        ("linear", Rope::new(d, &config(RopeScaling::Linear { factor: 4.0 }), false)),
        ("llama3", Rope::new(d, &config(llama3), false)),
        ("traditional", Rope::new(d, &config(RopeScaling::None), true)),
        ("partial", Rope::new(d / 2, &config(RopeScaling::None), false)),
    ]
}

/// A decode step's key written into a cache buffer is the key `Rope::forward` (MLX's RoPE)
/// gives at that position, to float32 rounding (the kernel's sin comes from the C library,
/// MLX's differs from it by an ulp here and there); the positions before it are kept, whether
/// the buffer is written in place (held by nothing else) or copied (shared: the other holder's
/// copy stays as it was, bit for bit).
#[test]
fn cache_writes_rotate_as_mlx_and_never_change_a_shared_buffer() {
    let (kv_heads, d, rows) = (3, 64, 4);
    let fresh = random(&[rows, 1, 3 * kv_heads * d], 60).index((.., .., kv_heads * d..2 * kv_heads * d));
    for (name, rope) in ropes(d as usize) {
        for (row, position) in [(0, 0), (2, 37), (3, 255), (1, 3000)] {
            let capacity = (position + 256) / 256 * 256;
            let original = random(&[1, kv_heads, capacity, d], 61 + position as u64);
            original.eval().unwrap();
            for shared in [true, false] {
                // A buffer of its own (the original stays to compare with).
                let buffer = ops::add(&original, Array::from_f32(0.0)).unwrap();
                buffer.eval().unwrap();
                let held = shared.then(|| buffer.clone());
                let written = cpu_attention::cache_write(&buffer, &fresh, row, position as usize, rope.table()).unwrap();
                drop(buffer);
                written.eval().unwrap();
                let r = row as i32;
                let expected =
                    fresh.index((r..r + 1, .., ..)).reshape(&[1, 1, kv_heads, d]).unwrap().transpose_axes(&[0, 2, 1, 3]).unwrap();
                let expected = rope.forward(&expected, position as usize).unwrap();
                let p = position;
                let got = written.index((.., .., p..p + 1, ..));
                let err = max_difference(&got, &expected);
                assert!(err < ROPE_TOLERANCE, "{name}, row {row} at {position} (shared {shared}): max difference {err}");
                if p > 0 {
                    assert_eq!(
                        max_difference(&written.index((.., .., ..p, ..)), &original.index((.., .., ..p, ..))),
                        0.0,
                        "{name}: earlier positions changed"
                    );
                }
                if let Some(held) = held {
                    assert_eq!(max_difference(&held, &original), 0.0, "{name}: a shared buffer was written into");
                }
            }
        }
    }
    // Values go in unrotated.
    let buffer = random(&[1, kv_heads, 256, d], 70);
    let written = cpu_attention::cache_write(&buffer, &fresh, 1, 9, None).unwrap();
    let expected = fresh.index((1..2, .., ..)).reshape(&[1, kv_heads, 1, d]).unwrap();
    assert_eq!(max_difference(&written.index((.., .., 9..10, ..)), &expected), 0.0);
}

#[test]
fn decode_inputs_it_cannot_take_are_errors_not_crashes() {
    let (kv_heads, d) = (2, 64);
    let q = fused_query(2, 4, kv_heads, d, 80);
    let k = random(&[1, kv_heads, 256, d], 81);
    let rope = plain_rope(d as usize);
    let two = |a: &Array| vec![a.clone(), a.clone()];
    let half = k.as_dtype(Dtype::Float16).unwrap();
    for (what, result) in [
        ("a length past the buffer", cpu_attention::decode_attention(&q, &two(&k), &two(&k), &[3, 257], 4, 0.1, rope.table())),
        ("no keys at all", cpu_attention::decode_attention(&q, &two(&k), &two(&k), &[3, 0], 4, 0.1, rope.table())),
        ("half precision", cpu_attention::decode_attention(&q, &two(&half), &two(&half), &[3, 4], 4, 0.1, rope.table())),
        ("heads unlike q's", cpu_attention::decode_attention(&q, &two(&k), &two(&k), &[3, 4], 3, 0.1, rope.table())),
        (
            "rows unlike q's",
            cpu_attention::decode_attention(&q, std::slice::from_ref(&k), std::slice::from_ref(&k), &[3], 4, 0.1, rope.table()),
        ),
        ("a position past the buffer", cpu_attention::cache_write(&k, &q.index((.., .., ..kv_heads * d)), 0, 256, rope.table())),
        ("a row past the batch", cpu_attention::cache_write(&k, &q.index((.., .., ..kv_heads * d)), 2, 3, rope.table())),
        ("new keys unlike the buffer's heads", cpu_attention::cache_write(&k, &q, 0, 3, rope.table())),
    ] {
        let err = result.err().unwrap_or_else(|| panic!("{what}: accepted"));
        assert!(err.to_string().contains("kernel"), "{what}: {err}");
    }
    let mismatched = cpu_attention::decode_attention(&q, &two(&k), std::slice::from_ref(&k), &[3, 4], 4, 0.1, rope.table());
    assert!(mismatched.is_err());
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
    // The decode kernel: one step, and a verifying pass of 16 positions on one cache.
    let rope = plain_rope(64);
    for t in [1024usize, 4096] {
        let (k, v) = (random(&[1, 3, t as i32 + 16, 64], 2), random(&[1, 3, t as i32 + 16, 64], 3));
        for positions in [1, 16] {
            let q = fused_query(positions as i32, 9, 3, 64, 4);
            let keys = vec![k.clone(); positions];
            let values = vec![v.clone(); positions];
            let lens: Vec<usize> = (0..positions).map(|j| t + j).collect();
            let ours = time(&|| cpu_attention::decode_attention(&q, &keys, &values, &lens, 9, 0.125, rope.table()).unwrap());
            println!("decode kernel, {positions:>2} positions over {t:>4} keys: {ours:8.3} ms");
        }
    }
}
