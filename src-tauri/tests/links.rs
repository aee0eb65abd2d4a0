//! The built app finds libmlx by itself (rpath), with no LD_LIBRARY_PATH: what a user who
//! double-clicks it gets. Also makes `cargo test` build the app binary, which the end-to-end
//! suite then drives (scripts/test.sh), so it is not built twice with different features.

#[cfg(target_os = "linux")]
#[test]
fn the_app_resolves_libmlx_through_its_rpath() {
    let app = env!("CARGO_BIN_EXE_confab-app");
    let out = std::process::Command::new("ldd").arg(app).env_remove("LD_LIBRARY_PATH").output().expect("ldd runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text.lines().find(|l| l.contains("libmlx")).unwrap_or_else(|| panic!("no libmlx in ldd output:\n{text}"));
    assert!(!line.contains("not found"), "libmlx is not found: {line}");
    assert!(line.contains("/mlx/lib/libmlx.so"), "libmlx resolves somewhere unexpected: {line}");
}
