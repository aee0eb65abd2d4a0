//! Links libmlx (run-time paths), compiles Confab's CPU kernels for MLX (`native/`), built
//! against the same wheel's headers as mlx-c, and compiles libsoxr (`native/soxr`, the
//! resampler transformers' audio loader uses).

fn main() {
    mlx_rpath::link_libmlx();
    println!("cargo:rerun-if-changed=native");
    let include = std::env::var("DEP_MLX_INCLUDE").expect("DEP_MLX_INCLUDE: confab-engine must depend on mlx-sys directly");
    kernel(&include).file("native/cpu_linear.cpp").compile("confab_cpu_linear");
    // The attention kernel's tiles are multiply-adds: fused (one rounding each, as MLX's own
    // matmul does through BLAS), which ISO C++ mode would otherwise forbid.
    kernel(&include)
        .flag_if_supported("-ffp-contract=fast")
        .flag_if_supported("-Wno-psabi")
        .file("native/cpu_attention.cpp")
        .compile("confab_cpu_attention");
    // The decode kernels' RoPE, its products rounded as MLX's are (see the file): no fused
    // multiply-adds.
    // After the attention library, which calls it (static libraries link in order).
    kernel(&include).flag_if_supported("-ffp-contract=off").file("native/cpu_rope.cpp").compile("confab_cpu_rope");
    build_soxr();
}

/// A CPU kernel's build: C++20 at -O3 against the wheel's MLX headers.
fn kernel(include: &str) -> cc::Build {
    let mut build = cc::Build::new();
    build.cpp(true).std("c++20").opt_level(3).include(include).flag_if_supported("-Wno-unused-parameter");
    build
}

/// libsoxr's single-precision resampler; its SIMD core only on x86-64 (see soxr-config.h).
fn build_soxr() {
    let mut sources = vec!["soxr.c", "data-io.c", "dbesi0.c", "filter.c", "cr.c", "cr32.c", "fft4g32.c", "fft4g64.c"];
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        sources.extend(["cr32s.c", "pffft32s.c", "util32s.c"]);
    }
    cc::Build::new()
        .include("native/soxr")
        .define("SOXR_LIB", "0")
        .opt_level(2)
        .warnings(false)
        .files(sources.iter().map(|s| format!("native/soxr/{s}")))
        .compile("confab_soxr");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        println!("cargo:rustc-link-lib=m");
    }
}
