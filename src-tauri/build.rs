fn main() {
    mlx_rpath::link_app_libmlx();
    // Only the commands listed here get permissions; capabilities/ grants them to windows.
    let manifest = tauri_build::AppManifest::new().commands(&[
        "runtime_info",
        "diagnostics",
        "list_conversations",
        "create_conversation",
        "rename_conversation",
        "delete_conversation",
        "conversation_messages",
        "select_branch",
        "search_messages",
        "send_message",
        "regenerate",
        "edit_message",
        "stop_reply",
        "attach_paths",
        "attach_bytes",
        "attachment_bytes",
        "list_models",
        "model_state",
        "load_model",
        "get_settings",
        "save_settings",
        "server_status",
        "list_providers",
        "save_provider",
        "remove_provider",
        "refresh_provider_models",
        "mark_remote_model_inputs",
        "select_remote_model",
    ]);
    let attributes = tauri_build::Attributes::new()
        .config_path("../tauri.conf.json")
        .app_manifest(manifest);
    if let Err(e) = tauri_build::try_build(attributes) {
        panic!("tauri-build: {e:#}");
    }
}
