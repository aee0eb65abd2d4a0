//! `confab bench`: prefill and decode speed and peak memory on a synthetic prompt, the same
//! workload as mlx-lm's benchmark (random prompt tokens, greedy, end-of-sequence ignored).

use confab_engine::runtime::{Event, Prompt, Request, Timings};
use confab_engine::sample::SamplingParams;

use super::common::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    #[arg(long, default_value_t = 512)]
    prompt_tokens: usize,
    #[arg(long, default_value_t = 128)]
    gen_tokens: u32,
    /// Measured runs after one warm-up; the report is their mean.
    #[arg(long, default_value_t = 1)]
    runs: usize,
    /// Prefill chunk size (the engine's default, 512; mlx-lm uses 2048).
    #[arg(long, default_value_t = 512)]
    chunk: usize,
    #[arg(long)]
    json: bool,
}

#[derive(serde::Serialize)]
struct Report {
    model: String,
    dtype: String,
    prompt_tokens: usize,
    gen_tokens: u32,
    prefill_tokens_per_s: f64,
    decode_tokens_per_s: f64,
    time_to_first_token_ms: f64,
    peak_memory_gb: f64,
    runs: usize,
}

/// Deterministic "random" prompt ids (a fixed LCG), so every run and every tool sees the same.
pub fn synthetic_prompt(len: usize, vocab: usize) -> Vec<u32> {
    let mut state = 0x2545_f491_4f6c_dd1du64;
    (0..len)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            ((state >> 33) % vocab as u64) as u32
        })
        .collect()
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    // Identical requests must not reuse each other's cache: measure computing, not caching.
    let mut model = args.model.clone();
    model.cache.no_prefix_cache = true;
    let (engine, id, info) = model.load(false)?;
    let prompt = synthetic_prompt(args.prompt_tokens, info.vocab_size);
    let mut measured: Vec<Timings> = vec![];
    for run in 0..=args.runs {
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = args.gen_tokens;
        let mut request = Request::new(id, Prompt::Tokens(prompt.clone()), sampling);
        request.ignore_eos = true;
        request.chunk_size = args.chunk;
        request.reuse_prefix = false;
        for event in engine.generate(request) {
            match event {
                Event::Done { timings, .. } if run > 0 => measured.push(timings),
                Event::Error(e) => return Err(e.into()),
                _ => {}
            }
        }
    }
    let mean = |f: fn(&Timings) -> f64| measured.iter().map(f).sum::<f64>() / measured.len() as f64;
    let report = Report {
        model: info.path.display().to_string(),
        dtype: info.dtype.clone(),
        prompt_tokens: args.prompt_tokens,
        gen_tokens: args.gen_tokens,
        prefill_tokens_per_s: mean(|t| t.prefill_tokens_per_s),
        decode_tokens_per_s: mean(|t| t.decode_tokens_per_s),
        time_to_first_token_ms: mean(|t| t.time_to_first_token_ms),
        peak_memory_gb: measured.iter().map(|t| t.peak_memory_bytes).max().unwrap_or(0) as f64 / 1e9,
        runs: args.runs,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "prompt {} tok: prefill {:.1} tok/s | generate {} tok: decode {:.1} tok/s | peak {:.2} GB",
            report.prompt_tokens, report.prefill_tokens_per_s, report.gen_tokens, report.decode_tokens_per_s, report.peak_memory_gb
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
