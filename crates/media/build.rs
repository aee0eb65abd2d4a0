//! Compiles the vendored C the decoders call, unmodified (`vendor/` at the repository's root):
//! libsoxr (the resampler transformers' audio loader uses) and libmpg123 (the MP3 decoder under it).

const VENDOR: &str = "../../vendor";

fn main() {
    println!("cargo:rerun-if-changed={VENDOR}/soxr");
    println!("cargo:rerun-if-changed={VENDOR}/mpg123");
    build_soxr();
    build_mpg123();
}

/// libsoxr's single-precision resampler; its SIMD core only on x86-64 (see soxr-config.h).
fn build_soxr() {
    let mut sources = vec!["soxr.c", "data-io.c", "dbesi0.c", "filter.c", "cr.c", "cr32.c", "fft4g32.c", "fft4g64.c"];
    if std::env::var("CARGO_CFG_TARGET_ARCH").as_deref() == Ok("x86_64") {
        sources.extend(["cr32s.c", "pffft32s.c", "util32s.c"]);
    }
    cc::Build::new()
        .include(format!("{VENDOR}/soxr"))
        .define("SOXR_LIB", "0")
        .opt_level(2)
        .warnings(false)
        .files(sources.iter().map(|s| format!("{VENDOR}/soxr/{s}")))
        .compile("confab_soxr");
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("windows") {
        println!("cargo:rustc-link-lib=m");
    }
}

/// libmpg123's float decoding (see vendor/mpg123/src/config.h). On x86-64 the decoders the
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
    build
        .include(format!("{VENDOR}/mpg123/src"))
        .include(format!("{VENDOR}/mpg123/src/include"))
        .define("REAL_IS_FLOAT", None)
        .define("HAVE_CONFIG_H", None);
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
        .files(sources.iter().map(|s| format!("{VENDOR}/mpg123/src/{s}")))
        .compile("confab_mpg123");
}
