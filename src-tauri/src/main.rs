//! confab-app: the Tauri shell. It only wires the web UI to the engine; the work is elsewhere.

// No console window on Windows release builds.
#![cfg_attr(not(debug_assertions), windows_subsystem = "windows")]

mod commands;

use std::process::ExitCode;

fn main() -> ExitCode {
    let result = tauri::Builder::default()
        .invoke_handler(tauri::generate_handler![commands::runtime_info])
        .run(tauri::generate_context!("../tauri.conf.json"));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("confab-app: {e}");
            ExitCode::FAILURE
        }
    }
}
