//! `confab bench`: prefill and decode speed and peak memory on a synthetic prompt, the same
//! workload as mlx-lm's benchmark (random prompt tokens, greedy, end-of-sequence ignored).

use std::time::Instant;

use confab_engine::SamplingParams;
use confab_engine::{Engine, Event, ModelId, Prompt, Request, Timings};

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
    /// Measure the first run, without a warm-up (memory at long contexts, where a warm-up
    /// would double the time; speeds are then a cold start's).
    #[arg(long)]
    no_warm_up: bool,
    /// Prefill chunk size (mlx-lm uses 2048).
    #[arg(long, default_value_t = confab_engine::defaults::PREFILL_CHUNK_TOKENS)]
    chunk: usize,
    #[arg(long)]
    json: bool,
    /// Run this many requests at once instead (continuous batching): prompts of mixed
    /// lengths around --prompt-tokens, each generating --gen-tokens; reports aggregate
    /// output tok/s and time to first token. A list (`1,4,8`) runs each count in turn.
    #[arg(long, value_delimiter = ',')]
    concurrent: Vec<usize>,
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
    /// What the full keys/values layers hold at the end (buffers grown in steps of 256
    /// positions), and in which precision (`--kv-bits`; `None`: the compute dtype).
    keys_values_bytes: usize,
    kv_bits: Option<u8>,
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
    if !args.concurrent.is_empty() {
        for &clients in &args.concurrent {
            concurrent(&args, &engine, id, info.vocab_size, clients.max(1))?;
        }
        return Ok(std::process::ExitCode::SUCCESS);
    }
    let prompt = synthetic_prompt(args.prompt_tokens, info.vocab_size);
    let mut measured: Vec<Timings> = vec![];
    let mut keys_values_bytes = 0;
    let first = usize::from(args.no_warm_up);
    for run in first..=args.runs {
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = args.gen_tokens;
        let mut request = Request::new(id, Prompt::Tokens(prompt.clone()), sampling);
        request.ignore_eos = true;
        request.chunk_size = args.chunk;
        request.reuse_prefix = false;
        for event in engine.generate(request) {
            match event {
                Event::Done { timings, usage, .. } if run > 0 => {
                    measured.push(timings);
                    keys_values_bytes = usage.state_bytes.keys_values;
                }
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
        keys_values_bytes,
        kv_bits: info.kv_quantization.map(|q| q.bits),
        runs: args.runs,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "prompt {} tok: prefill {:.1} tok/s | generate {} tok: decode {:.1} tok/s | peak {:.2} GB | keys/values {:.1} MB",
            report.prompt_tokens,
            report.prefill_tokens_per_s,
            report.gen_tokens,
            report.decode_tokens_per_s,
            report.peak_memory_gb,
            report.keys_values_bytes as f64 / 1e6
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[derive(serde::Serialize)]
struct ConcurrentReport {
    concurrent: usize,
    prompt_tokens: Vec<usize>,
    gen_tokens: u32,
    wall_s: f64,
    /// Every request's generated tokens over the wall time, first submit to last Done.
    aggregate_tokens_per_s: f64,
    /// From submitting (all at once) to each request's first token.
    ttft_p50_ms: f64,
    ttft_p95_ms: f64,
}

/// `clients` requests submitted together, each read on its own thread.
fn concurrent(args: &Args, engine: &Engine, id: ModelId, vocab: usize, clients: usize) -> anyhow::Result<std::process::ExitCode> {
    // Mixed lengths around the asked one; distinct prompts (slices of one long synthetic text).
    let lengths: Vec<usize> = (0..clients).map(|i| (args.prompt_tokens * [4, 2, 6, 3][i % 4] / 4).max(1)).collect();
    let text = synthetic_prompt(lengths.iter().sum::<usize>() + clients, vocab);
    let request = |i: usize| {
        let start: usize = lengths[..i].iter().sum::<usize>() + i;
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = args.gen_tokens;
        let mut request = Request::new(id, Prompt::Tokens(text[start..start + lengths[i]].to_vec()), sampling);
        request.ignore_eos = true;
        request.chunk_size = args.chunk;
        request.reuse_prefix = false;
        request
    };
    // Warm-up: one request alone.
    engine.generate(request(0)).for_each(drop);

    let started = Instant::now();
    let readers: Vec<_> = (0..clients)
        .map(|i| {
            let generation = engine.generate(request(i));
            std::thread::spawn(move || -> anyhow::Result<(f64, usize)> {
                let mut first = None;
                for event in generation {
                    match event {
                        Event::Token { .. } => drop(first.get_or_insert_with(|| started.elapsed().as_secs_f64())),
                        Event::Done { usage, .. } => return Ok((first.unwrap_or(0.0), usage.generated)),
                        Event::Error(e) => return Err(e.into()),
                        _ => {}
                    }
                }
                anyhow::bail!("the engine stopped")
            })
        })
        .collect();
    let mut ttfts = vec![];
    let mut generated = 0;
    for reader in readers {
        let (ttft, n) = reader.join().map_err(|_| anyhow::anyhow!("a reader thread panicked"))??;
        ttfts.push(ttft);
        generated += n;
    }
    let wall = started.elapsed().as_secs_f64();
    ttfts.sort_by(f64::total_cmp);
    let percentile = |p: f64| ttfts[((ttfts.len() - 1) as f64 * p).round() as usize] * 1e3;
    let report = ConcurrentReport {
        concurrent: clients,
        prompt_tokens: lengths,
        gen_tokens: args.gen_tokens,
        wall_s: wall,
        aggregate_tokens_per_s: generated as f64 / wall,
        ttft_p50_ms: percentile(0.5),
        ttft_p95_ms: percentile(0.95),
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} concurrent (prompts {:?} tok, {} tok each): {:.1} tok/s aggregate | time to first token p50 {:.0} ms, p95 {:.0} ms",
            report.concurrent,
            report.prompt_tokens,
            report.gen_tokens,
            report.aggregate_tokens_per_s,
            report.ttft_p50_ms,
            report.ttft_p95_ms
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}
