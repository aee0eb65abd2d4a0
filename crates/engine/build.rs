//! Links libmlx (run-time paths) and compiles Confab's CPU kernels for MLX (`native/`) and their
//! thread pool, built against the same wheel's headers as mlx-c.

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
    // Unwritten MLX buffers for the prefix cache's disk tier to read into.
    kernel(&include).file("native/host_array.cpp").compile("confab_host_array");
}

/// A CPU kernel's build: C++20 at -O3 against the wheel's MLX headers.
fn kernel(include: &str) -> cc::Build {
    let mut build = cc::Build::new();
    build.cpp(true).std("c++20").opt_level(3).include(include).flag_if_supported("-Wno-unused-parameter");
    build
}
