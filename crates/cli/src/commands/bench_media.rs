//! `confab bench-media`: what the encoder cache buys. The same image (clips, videos) asked about
//! twice in one run, neither time reusing a conversation prefix: time to first token when
//! the towers run, and when their outputs come from the encoder cache.

use std::path::PathBuf;

use anyhow::bail;
use confab_engine::ChatMessage;
use confab_engine::SamplingParams;
use confab_engine::{EncoderOptions, PrefixOptions};
use confab_engine::{Engine, EngineOptions, Event, ModelId, Plan, Prompt, Request};

use super::common::{MediaArgs, ModelArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    #[command(flatten)]
    media: MediaArgs,
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Report {
    prompt_tokens: usize,
    media_soft_tokens: usize,
    first_ttft_ms: f64,
    first_tower_runs: usize,
    repeated_ttft_ms: f64,
    repeated_tower_runs: usize,
    speedup: f64,
}

/// Time to first token and the plan, for one question about the media, without prefix reuse.
fn ttft(engine: &Engine, model: ModelId, media: &MediaArgs, question: &str) -> anyhow::Result<(f64, Plan)> {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 2;
    let message = ChatMessage::user(question).with_media(media.items());
    let mut request = Request::new(model, Prompt::Chat(vec![message]), sampling);
    request.ignore_eos = true;
    request.reuse_prefix = false;
    let (mut ms, mut plan) = (0.0, None);
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Done { timings, .. } => ms = timings.time_to_first_token_ms,
            Event::Error(e) => return Err(e.into()),
            Event::Token { .. } | Event::Text(_) | Event::Canvas(_) | Event::Queued { .. } => {}
        }
    }
    Ok((ms, plan.ok_or_else(|| anyhow::anyhow!("the engine sent no plan"))?))
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    if args.media.is_empty() {
        bail!("give at least one --image PATH, --audio PATH or --video PATH");
    }
    // A fresh, memory-only encoder cache: the first request is a true miss.
    let encoder = EncoderOptions { dir: None, ..Default::default() };
    let prefix = PrefixOptions { enabled: false, ..Default::default() };
    let engine = Engine::start(EngineOptions { encoder, prefix, ..Default::default() })?;
    let path: PathBuf = args.model.path();
    let options = args.model.load_options()?;
    let (model, _) = engine.load(&path, options, |_| {})?;

    // Warm MLX up on text alone so the first media request pays for the towers, not for setup.
    let mut warm = Request::new(model, Prompt::Chat(vec![ChatMessage::user("Hello.")]), SamplingParams::greedy());
    warm.sampling.max_tokens = 1;
    engine.generate(warm).for_each(drop);

    let (first, first_plan) = ttft(&engine, model, &args.media, "Describe this.")?;
    let (repeated, repeated_plan) = ttft(&engine, model, &args.media, "Describe this again.")?;
    let report = Report {
        prompt_tokens: first_plan.prompt_tokens,
        media_soft_tokens: first_plan.media.iter().map(|m| m.soft_tokens).sum(),
        first_ttft_ms: first,
        first_tower_runs: first_plan.tower_runs,
        repeated_ttft_ms: repeated,
        repeated_tower_runs: repeated_plan.tower_runs,
        speedup: first / repeated,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} prompt tokens ({} from media): first token with the towers {:.1} ms ({} runs) | repeated, from the encoder cache {:.1} ms ({} runs) | {:.2}x",
            report.prompt_tokens, report.media_soft_tokens, first, report.first_tower_runs, repeated, report.repeated_tower_runs, report.speedup
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
