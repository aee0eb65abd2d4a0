//! `confab`: the engine's first client and its benchmark harness.

mod commands;
mod words;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(name = "confab", version, about = "Local, private, multimodal chat on MLX")]
struct Cli {
    /// More log lines on stderr: -v a line per model load and request, -vv prefill chunks and
    /// cache lookups, -vvv every decode step. CONFAB_LOG overrides (e.g. confab_engine=debug).
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    verbose: u8,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check MLX, the device, model folders and the default model.
    Doctor(commands::doctor::Args),
    /// Chat with a model in the terminal (or one question with --prompt).
    Chat(commands::chat::Args),
    /// Generate from one prompt; --json for ids, text, usage and timings.
    Generate(commands::generate::Args),
    /// Measure prefill and decode speed and peak memory.
    Bench(commands::bench::Args),
    /// Time to first token when continuing a long conversation: cold, from memory, from disk.
    BenchSession(commands::bench_session::Args),
    /// Time to first token for an image asked about twice: towers run, then the encoder cache.
    BenchMedia(commands::bench_media::Args),
    /// List the models found on this machine (* marks architectures this build can't run).
    Models(commands::models::Args),
    /// Download a model from the Hugging Face hub (or HF_ENDPOINT), resumable and verified.
    Pull(commands::pull::Args),
    /// Search the hub (or HF_ENDPOINT) for models by name.
    Search(commands::search::Args),
    /// Print the vectors an embedding model gives some texts, as JSON.
    Embed(commands::embed::Args),
    /// Serve the model over an OpenAI-compatible HTTP API (loopback by default).
    Serve(commands::serve::Args),
    #[command(hide = true)]
    ExportTokenizer(commands::export_tokenizer::Args),
}

fn main() -> std::process::ExitCode {
    // Before anything else: OpenBLAS chose its kernels when it loaded (see the function).
    let blas_note = confab_engine::run_on_the_right_blas_core(&confab_paths::AppPaths::machine_cache_dir());
    let cli = Cli::parse();
    // A server logs a line per request by default, as other servers do.
    let verbosity = if matches!(cli.command, Command::Serve(_)) { cli.verbose.max(1) } else { cli.verbose };
    confab_log::init_stderr(verbosity);
    if let Some(note) = blas_note {
        tracing::warn!("{note}");
    }
    let result = match cli.command {
        Command::Doctor(args) => commands::doctor::run(args),
        Command::Chat(args) => commands::chat::run(args),
        Command::Generate(args) => commands::generate::run(args),
        Command::Bench(args) => commands::bench::run(args),
        Command::Models(args) => commands::models::run(args),
        Command::BenchSession(args) => commands::bench_session::run(args),
        Command::BenchMedia(args) => commands::bench_media::run(args),
        Command::Pull(args) => commands::pull::run(args),
        Command::Search(args) => commands::search::run(args),
        Command::Embed(args) => commands::embed::run(args),
        Command::Serve(args) => commands::serve::run(args),
        Command::ExportTokenizer(args) => commands::export_tokenizer::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            eprintln!("error: {}", words::message(&err));
            std::process::ExitCode::FAILURE
        }
    }
}
