//! confab-app: the Tauri shell. It only wires the web UI to the engine and the store; the work
//! is in those crates.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod attachments;
mod chat;
#[macro_use]
mod commands;
mod desktop;
mod failure;
#[cfg(test)]
mod ipc;
mod local_server;
mod models;
mod providers;
mod settings;
mod state;
mod sync;
mod tools;

use std::process::ExitCode;
use std::sync::Arc;

use tauri::{DragDropEvent, Emitter, Manager, RunEvent, WebviewEvent, WindowEvent};

use crate::state::AppState;

/// `app_commands!(invoke_handler)`: Tauri's handler for every command in commands/list.rs.
macro_rules! invoke_handler {
    ($($module:ident :: $command:ident),* $(,)?) => {
        tauri::generate_handler![$(commands::$module::$command),*]
    };
}

fn main() -> ExitCode {
    if std::env::args_os().nth(1).is_some_and(|arg| arg == "--version") {
        return print_version();
    }
    // Before anything else: OpenBLAS chose its kernels when it loaded (see the function).
    let blas_note = confab_engine::run_on_the_right_blas_core(&confab_paths::AppPaths::machine_cache_dir());
    confab_log::init_app(&confab_paths::AppPaths::from_env().logs_dir());
    tracing::info!(version = env!("CARGO_PKG_VERSION"), "confab-app starting");
    if let Some(note) = blas_note {
        tracing::warn!("{note}");
    }
    let result = tauri::Builder::default()
        .setup(|app| {
            desktop::web_view_priority::steady_caret();
            if let Some(window) = app.get_webview_window("main") {
                desktop::web_view_priority::draw_without_compositing_without_a_gpu(&window);
                desktop::microphone::allow_microphone(&window);
            }
            let paths = confab_paths::AppPaths::from_env();
            let state = Arc::new(tauri::async_runtime::block_on(AppState::open(paths))?);
            app.manage(state.clone());
            // Downloads from the hub; an earlier run's unfinished ones come back paused.
            let window = app.handle().clone();
            let notify = Box::new(move |download: &models::downloads::Download| {
                let _ = window.emit(models::downloads::EVENT, download);
            });
            app.manage(models::downloads::Downloads::open(&state.paths.data_dir, notify));
            // The local server, when Settings have it on.
            let serving = state.clone();
            tauri::async_runtime::spawn(async move {
                let settings = serving.settings();
                serving.apply_server_settings(&settings).await;
            });
            // MCP servers switched on in Settings › Tools.
            commands::tools::start_at_launch(app.handle().clone(), state.clone());
            quit_on_terminate(app.handle().clone());
            // The window opens now; the model loads behind it and reports progress.
            let settings = state.settings();
            let chosen = settings.model_path.clone();
            let options_for = move |path: &std::path::Path| (settings.load_options(path), settings.draft_for(path));
            models::slot::load_at_startup(
                app.handle().clone(),
                state.engine.clone(),
                state.model.clone(),
                state.paths.clone(),
                chosen,
                options_for,
            );
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
        .invoke_handler(app_commands!(invoke_handler))
        .build(tauri::generate_context!("../tauri.conf.json"));
    match result {
        Ok(app) => {
            app.run(|app, event| {
                if let RunEvent::Exit = event {
                    shut_down_engine(app);
                }
            });
            ExitCode::SUCCESS
        }
        Err(e) => {
            tracing::error!("the app stopped: {e}");
            ExitCode::FAILURE
        }
    }
}

/// How long quitting waits for the engine to write its sessions and idle MLX's streams.
const ENGINE_SHUTDOWN_WAIT: std::time::Duration = std::time::Duration::from_secs(20);

/// The process exits without dropping the app's state, so the engine is stopped here: the
/// chats' prefix caches are kept on disk for the next launch, and no queued MLX work runs
/// while the process tears MLX down (which crashed at exit).
fn shut_down_engine(app: &tauri::AppHandle) {
    if let Some(state) = app.try_state::<Arc<AppState>>() {
        if state.engine.shutdown(ENGINE_SHUTDOWN_WAIT) {
            tracing::info!("engine stopped; sessions kept on disk");
        } else {
            tracing::warn!("the engine did not stop within {ENGINE_SHUTDOWN_WAIT:?}; quitting anyway");
        }
    }
}

/// A terminate signal (a logout, `kill`) quits as closing the window does, through
/// `RunEvent::Exit`, rather than ending the process where it stands.
fn quit_on_terminate(app: tauri::AppHandle) {
    #[cfg(unix)]
    tauri::async_runtime::spawn(async move {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut terminate) => {
                if terminate.recv().await.is_some() {
                    tracing::info!("terminate signal: quitting");
                    app.exit(0);
                }
            }
            Err(e) => tracing::warn!("cannot listen for the terminate signal ({e}); a kill ends the app where it stands"),
        }
    });
    #[cfg(not(unix))]
    drop(app);
}

/// `confab-app --version`: the app's version and the MLX it runs on, without opening a window
/// or touching the data folder. It starts only where the dynamic loader finds libmlx, so it
/// checks a build's run-time path (scripts/test.sh runs it after the bundle step).
fn print_version() -> ExitCode {
    let version = env!("CARGO_PKG_VERSION");
    match confab_engine::MlxRuntime::probe() {
        Ok(mlx) => {
            let library = mlx.library.map(|p| p.display().to_string()).unwrap_or_else(|| "unknown".into());
            println!("confab-app {version} (MLX {}, {}, {library})", mlx.version, mlx.backend);
            ExitCode::SUCCESS
        }
        Err(e) => {
            println!("confab-app {version} (MLX: {e})");
            ExitCode::FAILURE
        }
    }
}
