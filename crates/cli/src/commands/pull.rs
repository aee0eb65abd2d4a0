//! `confab pull REPO [--file NAME]`: a model from the Hugging Face hub (or `HF_ENDPOINT`) into
//! the Hugging Face cache, resumable and verified, with a progress line. A file that another
//! pull is downloading (the app, another terminal) is waited for, and the line says so.

use std::io::Write;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::Context;
use confab_engine::{runs_here, Architecture};
use confab_hub::{HubClient, HubOptions, Progress, PullOptions};
use confab_paths::AppPaths;

#[derive(clap::Args)]
pub struct Args {
    /// The repository, owner/name (e.g. HuggingFaceTB/SmolLM2-135M-Instruct).
    repo: String,
    /// Only this file (repeatable); needed for a repository with several GGUF files.
    #[arg(long = "file")]
    files: Vec<String>,
    /// The hub or a mirror (default: HF_ENDPOINT, else https://huggingface.co).
    #[arg(long)]
    endpoint: Option<String>,
    /// The cache to download into (default: HF_HUB_CACHE, else ~/.cache/huggingface/hub).
    #[arg(long)]
    cache_dir: Option<PathBuf>,
    /// Print the result as JSON (path, commit, files, bytes).
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    // The token comes from HF_TOKEN only: an argument would land in the shell's history.
    let client = HubClient::new(HubOptions::from_env(args.endpoint.as_deref(), None))?;
    let mut options = PullOptions::new(
        args.cache_dir.unwrap_or_else(AppPaths::hf_hub_cache),
        |config| runs_here(Architecture::Config(config)),
        |architecture| runs_here(Architecture::Gguf(architecture)),
        confab_engine::supported_architectures(),
    );
    options.files = args.files;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the download runtime")?;
    let mut line = ProgressLine::new();
    let pulled = runtime.block_on(confab_hub::pull(&client, &args.repo, &options, |p| line.show(p)));
    line.finish();
    let pulled = pulled?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&pulled)?);
    } else {
        println!("{}", pulled.model_path.display());
    }
    Ok(std::process::ExitCode::SUCCESS)
}

/// One line on stderr, rewritten a few times a second: file, bytes, speed, time left.
struct ProgressLine {
    started: Instant,
    first_bytes: Option<u64>,
    last_drawn: Option<Instant>,
    drawn: bool,
    /// The file last reported as waiting for another pull's download, said once.
    told_waiting: Option<String>,
}

impl ProgressLine {
    fn new() -> Self {
        ProgressLine { started: Instant::now(), first_bytes: None, last_drawn: None, drawn: false, told_waiting: None }
    }

    fn show(&mut self, p: &Progress) {
        // Speed counts this run's bytes only, not what a resumed partial already had.
        let first = *self.first_bytes.get_or_insert(p.bytes);
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        if p.waiting {
            self.show_waiting(p);
            return;
        }
        let done = p.bytes >= p.total;
        if !done && self.last_drawn.is_some_and(|t| t.elapsed() < Duration::from_millis(200)) {
            return;
        }
        self.last_drawn = Some(Instant::now());
        let elapsed = self.started.elapsed().as_secs_f64().max(1e-3);
        let speed = (p.bytes - first) as f64 / elapsed;
        let left = if speed > 0.0 { format!("{:.0} s left", (p.total - p.bytes) as f64 / speed) } else { "…".into() };
        let percent = if p.total > 0 { 100.0 * p.bytes as f64 / p.total as f64 } else { 100.0 };
        let mut err = std::io::stderr().lock();
        let _ = write!(
            err,
            "\r{}  {:.1}/{:.1} MiB  {percent:.0}%  {:.1} MiB/s  {left}\x1b[K",
            p.file,
            mib(p.bytes),
            mib(p.total),
            speed / (1 << 20) as f64
        );
        let _ = err.flush();
        self.drawn = true;
    }

    /// A line of its own the first time (it stays in the terminal's scrollback), then the
    /// progress line shows how far the other download got.
    fn show_waiting(&mut self, p: &Progress) {
        let mib = |b: u64| b as f64 / (1 << 20) as f64;
        let mut err = std::io::stderr().lock();
        if self.told_waiting.as_deref() != Some(p.file.as_str()) {
            let _ = writeln!(
                err,
                "\r{}: another download of this file is running (the app's, or another `confab pull`); waiting for it to finish\x1b[K",
                p.file
            );
            self.told_waiting = Some(p.file.clone());
            self.last_drawn = None;
        }
        if self.last_drawn.is_some_and(|t| t.elapsed() < Duration::from_millis(200)) {
            return;
        }
        self.last_drawn = Some(Instant::now());
        let _ = write!(err, "\r{}  waiting: the other download is at {:.1}/{:.1} MiB\x1b[K", p.file, mib(p.file_bytes), mib(p.file_size));
        let _ = err.flush();
        self.drawn = true;
    }

    fn finish(&self) {
        if self.drawn {
            eprintln!();
        }
    }
}
