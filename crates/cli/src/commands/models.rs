//! `confab models`: the models found on this machine, without loading any.

use std::path::PathBuf;

use confab_engine::discover;
use confab_paths::AppPaths;

#[derive(clap::Args)]
pub struct Args {
    /// More folders to search (the app's models folder, the Hugging Face cache, LM Studio's
    /// folders and Ollama's store are always searched).
    #[arg(long = "folder")]
    folders: Vec<PathBuf>,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let paths = AppPaths::from_env();
    let mut folders = vec![paths.models_dir.clone()];
    folders.extend(paths.other_model_folders());
    folders.extend(args.folders);
    let models = discover(&folders);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&models)?);
        return Ok(std::process::ExitCode::SUCCESS);
    }
    if models.is_empty() {
        eprintln!("no models found in {}", folders.iter().map(|f| f.display().to_string()).collect::<Vec<_>>().join(", "));
        return Ok(std::process::ExitCode::SUCCESS);
    }
    println!("{:<40} {:<12} {:<6} {:<9} {:>9} {:>8}  path", "name", "arch", "format", "quant", "size", "context");
    for m in models {
        let format = format!("{:?}", m.format).to_lowercase();
        let context = m.context_length.map_or("?".into(), |c| c.to_string());
        let arch = if m.supported { m.architecture.clone() } else { format!("{}*", m.architecture) };
        let size = format!("{:.1} GB", m.size_bytes as f64 / 1e9);
        println!(
            "{:<40} {:<12} {:<6} {:<9} {:>9} {:>8}  {}",
            m.name,
            arch,
            &format[..format.len().min(6)],
            m.quantization,
            size,
            context,
            m.path.display()
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
