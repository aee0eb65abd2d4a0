//! confab-app: the Tauri shell. It only wires the web UI to the engine and the store; the work
//! is in those crates.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;
mod failure;
mod inspect;
mod local_server;
mod model_slot;
mod providers;
mod remote_reply;
mod reply;
mod settings;
mod state;
mod title;
mod views;

use std::process::ExitCode;
use std::sync::Arc;

use tauri::{DragDropEvent, Manager, WebviewEvent, WindowEvent};

use crate::state::AppState;

fn main() -> ExitCode {
    // Before anything else: OpenBLAS chose its kernels when it loaded (see the function).
    let blas_note = confab_engine::blas::run_on_the_right_blas_core();
    confab_log::init_app(&confab_engine::AppPaths::from_env().logs_dir());
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "confab-app starting");
    if let Some(note) = blas_note {
        tracing::warn!("{note}");
    }
    let result = tauri::Builder::default()
        .setup(|app| {
            let paths = confab_engine::AppPaths::from_env();
            let state = Arc::new(tauri::async_runtime::block_on(AppState::open(paths))?);
            app.manage(state.clone());
            // The local server, when Settings have it on.
            let serving = state.clone();
            tauri::async_runtime::spawn(async move {
                let settings = serving.settings();
                local_server::apply(&serving, &settings).await;
            });
            // The window opens now; the model loads behind it and reports progress.
            model_slot::load_at_startup(app.handle().clone(), state);
            Ok(())
        })
        // Native drops: remembered here, so `attach_paths` reads only what the user dropped.
        .on_webview_event(|webview, event| {
            if let WebviewEvent::DragDrop(DragDropEvent::Drop { paths, .. }) = event {
                webview.state::<Arc<AppState>>().allow_dropped(paths);
            }
        })
        .on_window_event(|window, event| {
            if let WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. }) = event {
                window.state::<Arc<AppState>>().allow_dropped(paths);
            }
        })
        .invoke_handler(tauri::generate_handler![
            commands::runtime::runtime_info,
            commands::runtime::diagnostics,
            commands::conversations::list_conversations,
            commands::conversations::create_conversation,
            commands::conversations::rename_conversation,
            commands::conversations::delete_conversation,
            commands::conversations::conversation_messages,
            commands::conversations::select_branch,
            commands::conversations::search_messages,
            commands::chat::send_message,
            commands::chat::regenerate,
            commands::chat::edit_message,
            commands::chat::stop_reply,
            commands::attachments::attach_paths,
            commands::attachments::attach_bytes,
            commands::attachments::attachment_bytes,
            commands::models::list_models,
            commands::models::model_state,
            commands::models::load_model,
            commands::settings::get_settings,
            commands::settings::save_settings,
            commands::settings::server_status,
            commands::providers::list_providers,
            commands::providers::save_provider,
            commands::providers::remove_provider,
            commands::providers::refresh_provider_models,
            commands::providers::mark_remote_model_inputs,
            commands::providers::select_remote_model,
        ])
        .run(tauri::generate_context!("../tauri.conf.json"));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("the app stopped: {e}");
            ExitCode::FAILURE
        }
    }
}
