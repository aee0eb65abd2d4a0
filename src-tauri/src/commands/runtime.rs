//! Which MLX the app runs on, where it keeps its files, and what to paste into a bug report.

use std::path::PathBuf;

use confab_engine::MlxRuntime;
use confab_paths::{AppPaths, DefaultModel};

use super::App;

/// How much of the log "Copy diagnostics" takes.
const DIAGNOSTIC_LINES: usize = 200;

#[derive(Debug, serde::Serialize, ts_rs::TS)]
pub struct RuntimeInfo {
    /// Confab's own version.
    pub app_version: String,
    pub mlx: MlxRuntime,
    pub paths: AppPaths,
    pub default_model: DefaultModelStatus,
    /// The app's current log file.
    pub log_file: PathBuf,
}

#[derive(Debug, serde::Serialize, ts_rs::TS)]
pub struct DefaultModelStatus {
    pub name: String,
    pub path: PathBuf,
    pub present: bool,
}

/// Which MLX we run on, where the app keeps its files, and whether the default model is there.
// async: Tauri runs it off the main thread, so the window never waits on it.
#[tauri::command]
pub async fn runtime_info() -> Result<RuntimeInfo, String> {
    gather(AppPaths::from_env())
}

fn gather(paths: AppPaths) -> Result<RuntimeInfo, String> {
    let mlx = MlxRuntime::probe().map_err(|e| format!("MLX is not usable: {e}"))?;
    let model = DefaultModel::manifest();
    let default_model = DefaultModelStatus { path: model.path(&paths), present: model.is_present(&paths), name: model.name };
    Ok(RuntimeInfo {
        app_version: env!("CARGO_PKG_VERSION").into(),
        mlx,
        log_file: confab_log::log_path(&paths.logs_dir()),
        paths,
        default_model,
    })
}

/// Versions, the machine, the loaded model and the log's last lines, as plain text for a bug
/// report. It holds no conversation text and no key: the log never has them.
#[tauri::command]
pub async fn diagnostics(state: App<'_>) -> Result<String, String> {
    let mut text = format!("Confab {} on {} {}\n", env!("CARGO_PKG_VERSION"), std::env::consts::OS, std::env::consts::ARCH);
    match MlxRuntime::probe() {
        Ok(mlx) => text += &format!("MLX {} ({}, {})\n", mlx.version, mlx.backend, mlx.device),
        Err(e) => text += &format!("MLX is not usable: {e}\n"),
    }
    match state.model.current() {
        Some(model) => {
            let m = &model.info;
            text += &format!(
                "Model: {} ({}, {}, {}, {} tokens)\n",
                m.path.display(),
                m.architecture,
                format!("{:?}", m.format).to_lowercase(),
                m.dtype,
                m.context_length
            );
        }
        None => text += "Model: none loaded\n",
    }
    let logs = state.paths.logs_dir();
    text += &format!("Log: {}\n\n", confab_log::log_path(&logs).display());
    for line in confab_log::tail(&logs, DIAGNOSTIC_LINES) {
        text += &line;
        text.push('\n');
    }
    Ok(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn reports_mlx_and_a_missing_model() {
        let info = gather(AppPaths::under(Path::new("/nonexistent/confab"))).expect("MLX probes");
        assert_eq!(info.mlx.version, info.mlx.built_against);
        assert!(!info.default_model.present);
        assert!(info.default_model.path.starts_with("/nonexistent/confab/models"));
        let json = serde_json::to_value(&info).expect("serialises");
        assert!(json["mlx"]["version"].is_string());
        assert!(json["default_model"]["present"].is_boolean());
    }
}
