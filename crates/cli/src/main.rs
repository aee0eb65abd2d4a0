//! `confab`: the engine's first client. Diagnostics now; chat, generate, bench and models as
//! the engine grows.

mod commands;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "confab", version, about = "Local, private, multimodal chat on MLX")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check MLX, the device, model folders and the default model.
    Doctor(commands::doctor::Args),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Doctor(args) => commands::doctor::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {err:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
