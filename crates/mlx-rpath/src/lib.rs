//! Called from the build script of every crate that links MLX into a binary or test.
//!
//! A dependency's `cargo:rustc-link-arg` never reaches the final binary, so each such crate
//! adds the run-time search paths itself. The crate must depend on `mlx-sys` directly to see
//! `DEP_MLX_LIB_DIR`.
//!
//! Two kinds of build:
//! - **development** (`cargo build`, `cargo test`, `make run`): the `.deps` copy of libmlx that
//!   was linked comes first, so a binary in `target/` runs as it is; the installed layouts follow.
//! - **bundle** (the app built by `scripts/bundle.sh` on macOS, which sets `CONFAB_BUNDLE=1`):
//!   only the bundle's own folder, relative to the binary. An installed app carries no path of
//!   the machine it was built on, so it never loads a development libmlx that happens to be
//!   there. (On Linux `scripts/bundle.sh` sets the same path with patchelf on a copy of the
//!   development binary instead, so that the build tree's binary keeps running.)

/// The environment variable that `scripts/bundle.sh` sets for the app's build (on macOS).
pub const BUNDLE_ENV: &str = "CONFAB_BUNDLE";

/// Development run-time paths, for binaries that are only run from `target/` (the engine's
/// and the CLI's tests, the CLI).
pub fn link_libmlx() {
    emit(false);
}

/// For the app, which `scripts/bundle.sh` packages: bundle paths when `CONFAB_BUNDLE=1`,
/// development paths otherwise. (Only the app reads the variable, so a bundle build does not
/// rebuild the engine.)
pub fn link_app_libmlx() {
    println!("cargo:rerun-if-env-changed={BUNDLE_ENV}");
    emit(std::env::var(BUNDLE_ENV).is_ok_and(|v| v == "1"));
}

fn emit(bundle: bool) {
    println!("cargo:rerun-if-env-changed=DEP_MLX_LIB_DIR");
    let lib_dir = std::env::var("DEP_MLX_LIB_DIR").expect("DEP_MLX_LIB_DIR is unset: this crate must depend on mlx-sys directly");
    let target_os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    for path in rpaths(&target_os, (!bundle).then_some(lib_dir.as_str())) {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{path}");
    }
}

/// The run-time search paths, in order: `dev_lib_dir` (the linked `.deps` copy; `None` for a
/// bundle), then the installed layout: `../lib/confab/mlx/lib` beside the binary on Linux (the
/// .deb puts libmlx in `/usr/lib/confab/mlx/lib`), the app bundle's `Contents/Frameworks` on
/// macOS (with `mlx.metallib` beside `libmlx.dylib`). A development build also looks beside
/// the binary itself; a bundle does not.
pub fn rpaths(target_os: &str, dev_lib_dir: Option<&str>) -> Vec<String> {
    let (installed, beside) = if target_os == "macos" {
        ("@executable_path/../Frameworks", "@executable_path")
    } else {
        ("$ORIGIN/../lib/confab/mlx/lib", "$ORIGIN")
    };
    match dev_lib_dir {
        Some(dev) => vec![dev.to_string(), installed.to_string(), beside.to_string()],
        None => vec![installed.to_string()],
    }
}

#[cfg(test)]
mod tests {
    use super::rpaths;

    #[test]
    fn development_builds_find_the_linked_copy_first() {
        assert_eq!(
            rpaths("linux", Some("/work/.deps/mlx/cpu/mlx/lib")),
            ["/work/.deps/mlx/cpu/mlx/lib", "$ORIGIN/../lib/confab/mlx/lib", "$ORIGIN"]
        );
        assert_eq!(
            rpaths("macos", Some("/Users/me/confab/.deps/mlx/metal/mlx/lib")),
            ["/Users/me/confab/.deps/mlx/metal/mlx/lib", "@executable_path/../Frameworks", "@executable_path"]
        );
    }

    #[test]
    fn bundles_name_only_their_own_folder() {
        assert_eq!(rpaths("linux", None), ["$ORIGIN/../lib/confab/mlx/lib"]);
        assert_eq!(rpaths("macos", None), ["@executable_path/../Frameworks"]);
        for os in ["linux", "macos"] {
            for path in rpaths(os, None) {
                assert!(path.starts_with("$ORIGIN/") || path.starts_with("@executable_path/"), "{path}");
            }
        }
    }
}
