//! Links libmlx (run-time paths) and compiles Confab's CPU kernel for MLX (`native/`), built
//! against the same wheel's headers as mlx-c.

fn main() {
    mlx_rpath::link_libmlx();
    println!("cargo:rerun-if-changed=native");
    let include = std::env::var("DEP_MLX_INCLUDE").expect("DEP_MLX_INCLUDE: confab-engine must depend on mlx-sys directly");
    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .opt_level(3)
        .include(include)
        .flag_if_supported("-Wno-unused-parameter")
        .file("native/cpu_linear.cpp")
        .compile("confab_cpu_linear");
}
