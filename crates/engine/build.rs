//! Links libmlx (run-time paths), compiles Confab's CPU kernels for MLX (`native/`) and their
//! thread pool, built against the same wheel's headers as mlx-c, and compiles libsoxr
//! (`native/soxr`, the resampler transformers' audio loader uses) and libmpg123
//! (`native/mpg123`, the MP3 decoder under it).

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
    // The kernels' thread pool (native/thread_pool.h): its size for `confab doctor`, and the
    // checks src/cpu_threads.rs runs on pools of any size.
    kernel(&include).file("native/thread_pool.cpp").compile("confab_thread_pool");
    build_soxr();
    build_mpg123();
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

/// libmpg123's float decoding (see native/mpg123/src/config.h). On x86-64 the decoders the
/// soundfile wheel's build picks among at run time (AVX where the CPU has it, else SSE; the
/// assembly synths and DCTs, whose sums round differently from the C ones), so that MP3 samples
/// are the reference's bit for bit; elsewhere the generic C decoder (within 6.1e-7 of the x86-64
/// reference on the corpus).
fn build_mpg123() {
    let mut sources = vec![
        "compat/compat_str.c",
        "libmpg123/parse.c",
        "libmpg123/frame.c",
        "libmpg123/format.c",
        "libmpg123/dct64.c",
        "libmpg123/id3.c",
        "libmpg123/optimize.c",
        "libmpg123/readers.c",
        "libmpg123/tabinit.c",
        "libmpg123/libmpg123.c",
        "libmpg123/index.c",
        "libmpg123/layer1.c",
        "libmpg123/layer2.c",
        "libmpg123/layer3.c",
        "libmpg123/synth_real.c",
        "libmpg123/stringbuf.c",
    ];
    let mut build = cc::Build::new();
    build.include("native/mpg123/src").include("native/mpg123/src/include").define("REAL_IS_FLOAT", None).define("HAVE_CONFIG_H", None);
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        for opt in ["OPT_MULTI", "OPT_X86_64", "OPT_AVX", "OPT_GENERIC"] {
            build.define(opt, None);
        }
        sources.extend([
            "libmpg123/getcpuflags_x86_64.S",
            "libmpg123/dct36_x86_64.S",
            "libmpg123/dct36_avx.S",
            "libmpg123/dct64_x86_64_float.S",
            "libmpg123/dct64_avx_float.S",
            "libmpg123/synth_x86_64_float.S",
            "libmpg123/synth_stereo_x86_64_float.S",
            "libmpg123/synth_stereo_avx_float.S",
        ]);
    } else {
        build.define("OPT_GENERIC", None);
    }
    // The reference's x86-64 build has no fused multiply-adds (baseline ISA); keep the C parts
    // from fusing where the target has them.
    build
        .flag_if_supported("-ffp-contract=off")
        .opt_level(2)
        .warnings(false)
        .files(sources.iter().map(|s| format!("native/mpg123/src/{s}")))
        .compile("confab_mpg123");
}
