//! Builds mlx-c 0.7.0 against the official MLX 0.32.2 wheel and generates its bindings.
//!
//! - The wheel (libmlx, headers, CMake config) is unpacked by `fetch_mlx_wheel.py` into
//!   `<workspace>/.deps/mlx/<backend>` (or `$CONFAB_DEPS_DIR/mlx/<backend>`), on first build if
//!   setup has not done it already. Backend: `metal` on macOS, `cpu` on Linux, `cuda-12` with
//!   the `cuda` feature or `CONFAB_MLX_BACKEND=cuda-12`.
//! - mlx-c's sources come from the registry's mlx-sys 0.7.0 package in cargo's own source
//!   cache, fetched through `upstream/Cargo.toml` when missing. Nothing third-party is vendored.
//! - Dependents read `DEP_MLX_LIB_DIR` to give their binaries a run-time path to libmlx
//!   (a dependency's link arguments never reach the final binary).

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const MLX_VERSION: &str = "0.32.2";
const MLX_C_PACKAGE: &str = "mlx-sys-0.7.0";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let target_os = env::var("CARGO_CFG_TARGET_OS").unwrap();
    let target_arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    for var in ["CONFAB_MLX_BACKEND", "CONFAB_DEPS_DIR", "CONFAB_MLX_DIR", "CARGO_HOME"] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    println!("cargo:rerun-if-changed=native");
    println!("cargo:rerun-if-changed=fetch_mlx_wheel.py");

    let backend = backend(&target_os);
    let mlx_root = mlx_wheel_root(&manifest_dir, &backend);
    let mlx_lib_dir = mlx_root.join("mlx").join("lib");
    let mlx_c_root = mlx_c_sources(&manifest_dir);
    let compat = (target_arch != "aarch64").then(|| manifest_dir.join("native/compat.h"));

    build_mlx_c(&mlx_c_root, &mlx_root, &backend, compat.as_deref());
    println!("cargo:rustc-link-search=native={}", mlx_lib_dir.display());
    println!("cargo:rustc-link-lib=dylib=mlx");
    if target_os == "macos" {
        println!("cargo:rustc-link-lib=dylib=c++");
    } else {
        println!("cargo:rustc-link-lib=dylib=stdc++");
        cc::Build::new().file("native/mach_time.c").compile("confab_mach_time");
    }

    generate_bindings(&mlx_c_root, compat.as_deref());

    // Read by dependents' build scripts as DEP_MLX_*.
    println!("cargo:lib_dir={}", mlx_lib_dir.display());
    println!("cargo:root={}", mlx_root.display());
    println!("cargo:backend={backend}");
    println!("cargo:version={MLX_VERSION}");
    println!("cargo:include={}", mlx_root.join("mlx/include").display());
    // Baked into the crate for `confab doctor`.
    println!("cargo:rustc-env=CONFAB_MLX_LIB_DIR={}", mlx_lib_dir.display());
    println!("cargo:rustc-env=CONFAB_MLX_BACKEND={backend}");
    println!("cargo:rustc-env=CONFAB_MLX_VERSION={MLX_VERSION}");
}

fn backend(target_os: &str) -> String {
    if let Ok(chosen) = env::var("CONFAB_MLX_BACKEND") {
        return chosen;
    }
    match target_os {
        "macos" => "metal".into(),
        _ if env::var_os("CARGO_FEATURE_CUDA").is_some() => "cuda-12".into(),
        _ => "cpu".into(),
    }
}

fn workspace_root(manifest_dir: &Path) -> PathBuf {
    manifest_dir.join("../..").canonicalize().unwrap()
}

/// The unpacked wheel: `$CONFAB_MLX_DIR` if set, else `<deps>/mlx/<backend>`, fetched if absent.
fn mlx_wheel_root(manifest_dir: &Path, backend: &str) -> PathBuf {
    if let Some(dir) = env::var_os("CONFAB_MLX_DIR") {
        return PathBuf::from(dir);
    }
    let deps = env::var_os("CONFAB_DEPS_DIR").map(PathBuf::from).unwrap_or_else(|| workspace_root(manifest_dir).join(".deps"));
    let root = deps.join("mlx").join(backend);
    println!("cargo:rerun-if-changed={}", root.join("confab-wheel.json").display());
    if !root.join("confab-wheel.json").exists() {
        let python = env::var("PYTHON").unwrap_or_else(|_| "python3".into());
        let status = Command::new(&python)
            .arg(manifest_dir.join("fetch_mlx_wheel.py"))
            .args(["--backend", backend, "--dest"])
            .arg(deps.join("mlx"))
            .status();
        match status {
            Ok(s) if s.success() => {}
            other => panic!(
                "could not fetch the MLX {MLX_VERSION} wheel for backend `{backend}` ({other:?}). \
                 Run `scripts/setup.sh` (needs python3 with pip and access to PyPI)."
            ),
        }
    }
    root
}

/// mlx-c's sources inside the registry's mlx-sys 0.7.0 package, downloaded by cargo.
fn mlx_c_sources(manifest_dir: &Path) -> PathBuf {
    if let Some(found) = find_in_cargo_registry() {
        return found;
    }
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = Command::new(cargo).args(["fetch", "--manifest-path"]).arg(manifest_dir.join("upstream/Cargo.toml")).status();
    if !matches!(status, Ok(s) if s.success()) {
        panic!("could not fetch the registry package {MLX_C_PACKAGE} for mlx-c's sources ({status:?})");
    }
    find_in_cargo_registry().unwrap_or_else(|| panic!("{MLX_C_PACKAGE} was fetched but not found under CARGO_HOME"))
}

fn find_in_cargo_registry() -> Option<PathBuf> {
    let cargo_home =
        env::var_os("CARGO_HOME").map(PathBuf::from).or_else(|| env::var_os("HOME").map(|h| PathBuf::from(h).join(".cargo")))?;
    let registries = std::fs::read_dir(cargo_home.join("registry/src")).ok()?;
    registries.flatten().map(|index| index.path().join(MLX_C_PACKAGE).join("src/mlx-c")).find(|root| root.join("mlx/c/mlx.h").exists())
}

fn build_mlx_c(mlx_c_root: &Path, mlx_root: &Path, backend: &str, compat: Option<&Path>) {
    let wheel_cmake = mlx_root.join("mlx/share/cmake/MLX");
    let mut config = cmake::Config::new(mlx_c_root);
    if backend.starts_with("cuda") {
        // The wheel's config asks for the CUDA toolkit and cuDNN, which mlx-c does not use.
        let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
        config.define("MLX_DIR", manifest_dir.join("native/cmake-cuda")).define("CONFAB_MLX_WHEEL_CMAKE_DIR", &wheel_cmake);
    } else {
        config.define("MLX_DIR", &wheel_cmake);
    }
    config
        .define("MLX_C_USE_SYSTEM_MLX", "ON")
        .define("MLX_C_BUILD_EXAMPLES", "OFF")
        .define("BUILD_SHARED_LIBS", "OFF")
        // mlx-c is thin glue; an optimised build costs the same and keeps debug builds fast.
        .profile("Release");
    if let Some(header) = compat {
        config.cxxflag(format!("-include {}", header.display()));
    }
    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("macos") && !cfg!(target_os = "macos") {
        // Compiling for macOS on another OS (the CI cross check): see the file.
        config.define("CMAKE_PROJECT_INCLUDE", Path::new(env!("CARGO_MANIFEST_DIR")).join("native/macos-cross.cmake"));
    }
    let dst = config.build();
    println!("cargo:rustc-link-search=native={}/lib", dst.display());
    println!("cargo:rustc-link-lib=static=mlxc");
}

fn generate_bindings(mlx_c_root: &Path, compat: Option<&Path>) {
    let mut headers: Vec<PathBuf> = std::fs::read_dir(mlx_c_root.join("mlx/c"))
        .expect("mlx-c headers")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|ext| ext == "h"))
        .collect();
    headers.sort();

    let mut builder = bindgen::Builder::default()
        .rust_target("1.73.0".parse().unwrap())
        .clang_arg(format!("-I{}", mlx_c_root.display()))
        // Same exclusions as the registry crate, so the generated API is identical.
        .blocklist_function("malloc")
        .blocklist_function("realloc");
    if let Some(header) = compat {
        builder = builder.clang_arg("-include").clang_arg(header.display().to_string()).blocklist_type("float16_t");
        // declared in lib.rs as a newtype over u16
    }
    for header in &headers {
        builder = builder.header(header.display().to_string());
    }
    let out = PathBuf::from(env::var("OUT_DIR").unwrap()).join("bindings.rs");
    builder.generate().expect("bindgen over mlx-c headers").write_to_file(out).expect("write bindings.rs");
}
