use std::path::PathBuf;

// `app_commands!`: the one list of the app's commands.
include!("src/commands/list.rs");

macro_rules! command_names {
    ($($module:ident :: $command:ident),* $(,)?) => {
        &[$(stringify!($command)),*]
    };
}

/// Plugin permissions the main window has besides the app's own commands.
const CORE_PERMISSIONS: &[&str] = &["core:event:allow-listen", "core:event:allow-unlisten"];

fn main() {
    mlx_rpath::link_app_libmlx();
    let commands: &[&str] = app_commands!(command_names);
    // Only the listed commands get permissions; the capability grants them all to the main window.
    let manifest = tauri_build::AppManifest::new().commands(commands);
    let capabilities = write_main_capability(commands);
    println!("cargo:rerun-if-changed=src/commands/list.rs");
    let attributes =
        tauri_build::Attributes::new().config_path("../tauri.conf.json").capabilities_path_pattern(capabilities).app_manifest(manifest);
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build: {e:#}");
    }
}

/// The main window's capability, written to OUT_DIR from the command list; returns its path as
/// the glob tauri-build reads capabilities from.
fn write_main_capability(commands: &[&str]) -> &'static str {
    let permissions: Vec<String> =
        CORE_PERMISSIONS.iter().map(|p| p.to_string()).chain(commands.iter().map(|c| format!("allow-{}", c.replace('_', "-")))).collect();
    let capability = serde_json::json!({
        "identifier": "main",
        "description": "What the main window's UI may call: every command in src/commands/list.rs",
        "windows": ["main"],
        "permissions": permissions,
    });
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR")).join("capabilities");
    std::fs::create_dir_all(&dir).expect("create OUT_DIR/capabilities");
    let path = dir.join("main.json");
    std::fs::write(&path, serde_json::to_string_pretty(&capability).unwrap()).expect("write the capability");
    Box::leak(path.to_string_lossy().into_owned().into_boxed_str())
}
