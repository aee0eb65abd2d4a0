//! Which MLX the app runs on, and where it keeps its files.

use std::path::PathBuf;

use confab_engine::{AppPaths, DefaultModel, MlxRuntime};

/// Mirrors `RuntimeInfo` in ui/src/ipc.ts.
#[derive(Debug, serde::Serialize)]
pub struct RuntimeInfo {
    pub mlx: MlxRuntime,
    pub paths: AppPaths,
    pub default_model: DefaultModelStatus,
}

#[derive(Debug, serde::Serialize)]
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
    let default_model = DefaultModelStatus {
        path: model.path(&paths),
        present: model.is_present(&paths),
        name: model.name,
    };
    Ok(RuntimeInfo {
        mlx,
        paths,
        default_model,
    })
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
        assert!(info
            .default_model
            .path
            .starts_with("/nonexistent/confab/models"));
        let json = serde_json::to_value(&info).expect("serialises");
        assert!(json["mlx"]["version"].is_string());
        assert!(json["default_model"]["present"].is_boolean());
    }
}
