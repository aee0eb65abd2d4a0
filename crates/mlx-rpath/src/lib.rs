//! Called from the build script of every crate that links MLX into a binary or test.
//!
//! A dependency's `cargo:rustc-link-arg` never reaches the final binary, so each such crate
//! adds the run-time search paths itself. The crate must depend on `mlx-sys` directly to see
//! `DEP_MLX_LIB_DIR`.

/// Emits rpaths to the libmlx that was linked (development builds from `target/`) and to the
/// installed layouts: `../lib/confab/mlx/lib` beside the binary on Linux, the app bundle's
/// `Frameworks` folder on macOS.
pub fn link_libmlx() {
    println!("cargo:rerun-if-env-changed=DEP_MLX_LIB_DIR");
    let lib_dir = std::env::var("DEP_MLX_LIB_DIR")
        .expect("DEP_MLX_LIB_DIR is unset: this crate must depend on mlx-sys directly");
    let installed: &[&str] = if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") {
        &["@executable_path/../Frameworks", "@executable_path"]
    } else {
        &["$ORIGIN/../lib/confab/mlx/lib", "$ORIGIN"]
    };
    for path in std::iter::once(lib_dir.as_str()).chain(installed.iter().copied()) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{path}");
    }
}
