fn main() {
    mlx_rpath::link_libmlx();
    // Only the commands listed here get permissions; capabilities/ grants them to windows.
    let manifest = tauri_build::AppManifest::new().commands(&["runtime_info"]);
    let attributes = tauri_build::Attributes::new()
        .config_path("../tauri.conf.json")
        .app_manifest(manifest);
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build: {e:#}");
    }
}
