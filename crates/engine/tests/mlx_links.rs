//! The MLX wheel is linked and computes: the operations the engine is built from, on the
//! default device, checked against plain Rust arithmetic; and the default model's GGUF loads.

use confab_engine::MlxRuntime;
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::{fast, io::GgufFile, ops, Array};

fn close(a: &[f32], b: &[f32], tol: f32) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() <= tol * (1.0 + y.abs()))
}

#[test]
fn runtime_reports_the_wheel_version() {
    let runtime = MlxRuntime::probe().unwrap();
    assert_eq!(runtime.version, "0.32.2");
    assert_eq!(runtime.built_against, "0.32.2");
    let lib = runtime.library.expect("the loader mapped a libmlx");
    assert!(lib.file_name().unwrap().to_string_lossy().starts_with("libmlx"), "{lib:?}");
}

#[test]
fn matmul_matches_naive_product() {
    let (m, k, n) = (7usize, 33usize, 5usize);
    let a: Vec<f32> = (0..m * k).map(|i| ((i * 37 % 101) as f32 - 50.0) / 25.0).collect();
    let b: Vec<f32> = (0..k * n).map(|i| ((i * 53 % 97) as f32 - 48.0) / 31.0).collect();
    let mut want = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            want[i * n + j] = (0..k).map(|t| a[i * k + t] * b[t * n + j]).sum();
        }
    }
    let got = ops::matmul(Array::from_slice(&a, &[m as i32, k as i32]), Array::from_slice(&b, &[k as i32, n as i32])).unwrap();
    assert!(close(got.as_slice::<f32>(), &want, 1e-5));
}

#[test]
fn rope_rotates_pairs_by_position() {
    // One head, two positions, dimension 4, non-traditional (halves) layout.
    let x = Array::from_slice(&[1f32, 2.0, 3.0, 4.0, 1.0, 2.0, 3.0, 4.0], &[1, 1, 2, 4]);
    let got = fast::rope(&x, 4, false, 10000.0, 1.0, 0, None).unwrap();
    let got = got.as_slice::<f32>();
    // Position 0 is unchanged; position 1 rotates (x0, x2) by 1 rad and (x1, x3) by 0.01 rad.
    assert!(close(&got[..4], &[1.0, 2.0, 3.0, 4.0], 1e-6));
    let (c0, s0, c1, s1) = (1f32.cos(), 1f32.sin(), 0.01f32.cos(), 0.01f32.sin());
    let want = [1.0 * c0 - 3.0 * s0, 2.0 * c1 - 4.0 * s1, 1.0 * s0 + 3.0 * c0, 2.0 * s1 + 4.0 * c1];
    assert!(close(&got[4..], &want, 1e-5), "{got:?} vs {want:?}");
}

#[test]
fn attention_matches_softmax_weighted_values() {
    let q = Array::from_slice(&[0.5f32, -1.0], &[1, 1, 1, 2]);
    let k = Array::from_slice(&[1f32, 0.0, 0.0, 1.0, 1.0, 1.0], &[1, 1, 3, 2]);
    let v = Array::from_slice(&[1f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[1, 1, 3, 2]);
    let scale = 0.7f32;
    let got = fast::scaled_dot_product_attention(&q, &k, &v, scale, None, None).unwrap();
    let scores: Vec<f32> = [0.5f32, -1.0, -0.5].iter().map(|s| (s * scale).exp()).collect();
    let total: f32 = scores.iter().sum();
    let want: Vec<f32> =
        (0..2).map(|d| scores.iter().enumerate().map(|(i, w)| w / total * [1.0, 3.0, 5.0, 2.0, 4.0, 6.0][d * 3 + i]).sum()).collect();
    assert!(close(got.as_slice::<f32>(), &want, 1e-5), "{:?} vs {want:?}", got.as_slice::<f32>());
}

#[test]
fn default_model_gguf_loads() {
    let paths = AppPaths::from_env();
    let path = DefaultModel::manifest().path(&paths);
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    let gguf = GgufFile::load(&path).unwrap();
    let keys = gguf.array_keys().unwrap();
    assert_eq!(keys.len(), 694, "SmolLM2-135M's GGUF holds 694 arrays (quantized as weight/scales/biases)");
    assert_eq!(gguf.get_metadata_string("general.architecture").unwrap().as_deref(), Some("llama"));
}
