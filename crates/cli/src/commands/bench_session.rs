//! `confab bench-session`: what the prefix cache buys. A conversation of about
//! `--history` tokens continued by a `--turn`-token message: time to first token computed
//! cold, reused from memory, and reused from disk after a restart, in one run.
//!
//! `--branches`: what a regenerate and an edit of such a conversation cost instead (and the
//! next message after the regenerate), with the prefix cache's keys/values paged (shared
//! pages) or, `--contiguous-kv`, kept whole as before paging. The bytes each step copied are
//! in the log (`-vv`), which bench/paged_kv.py reads.

use confab_engine::PrefixOptions;
use confab_engine::SamplingParams;
use confab_engine::{Engine, EngineOptions, Event, ModelId, Prompt, Request, Timings};

use super::bench::synthetic_prompt;
use super::common::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    #[arg(long, default_value_t = 2000)]
    history: usize,
    #[arg(long, default_value_t = 30)]
    turn: usize,
    #[arg(long)]
    json: bool,
    /// Measure a regenerate and an edit instead (see the module's documentation).
    #[arg(long)]
    branches: bool,
    /// With --branches: the prefix cache keeps each conversation's keys/values whole, not in
    /// shared pages (the behaviour before paging, for comparison).
    #[arg(long)]
    contiguous_kv: bool,
    /// With --branches: tokens each reply generates (the decode speed is over them).
    #[arg(long, default_value_t = 64)]
    gen: u32,
    /// The disk tier's folder, left in place afterwards (bench/disk_tier.py reads its files);
    /// by default a temporary folder, removed.
    #[arg(long)]
    cache_dir: Option<std::path::PathBuf>,
}

#[derive(serde::Serialize)]
struct Report {
    history_tokens: usize,
    turn_tokens: usize,
    cold_ttft_ms: f64,
    memory_ttft_ms: f64,
    disk_ttft_ms: f64,
    memory_speedup: f64,
    disk_speedup: f64,
    memory_reused: usize,
    disk_reused: usize,
}

/// Time to first token and tokens reused, for one request.
fn ttft(engine: &Engine, model: ModelId, prompt: Vec<u32>, reuse: bool) -> anyhow::Result<(f64, usize, Vec<u32>)> {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 8;
    let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
    request.ignore_eos = true;
    request.reuse_prefix = reuse;
    let (mut ms, mut reused, mut tokens) = (0.0, 0, vec![]);
    for event in engine.generate(request) {
        match event {
            Event::Plan(plan) => reused = plan.reused_tokens,
            Event::Token { id, .. } => tokens.push(id),
            Event::Done { timings, .. } => ms = timings.time_to_first_token_ms,
            Event::Error(e) => return Err(e.into()),
            Event::Text(_) | Event::Canvas(_) | Event::Queued { .. } => {}
        }
    }
    Ok((ms, reused, tokens))
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    if args.branches {
        return branches(&args);
    }
    let dir = match &args.cache_dir {
        Some(dir) => std::fs::create_dir_all(dir).map(|_| dir.clone())?,
        None => tempfile_dir()?,
    };
    let start = |dir: &std::path::Path| -> anyhow::Result<(Engine, ModelId, usize)> {
        let prefix = PrefixOptions { dir: Some(dir.to_path_buf()), ..Default::default() };
        let engine = Engine::start(EngineOptions { prefix, ..Default::default() })?;
        let (id, info) = engine.load(args.model.path(), args.model.load_options()?, |_| {})?;
        Ok((engine, id, info.vocab_size))
    };
    let (engine, model, vocab) = start(&dir)?;
    let all = synthetic_prompt(args.history + 3 * args.turn + 8, vocab);
    let history = all[..args.history].to_vec();
    let turn = |i: usize| all[args.history + i * args.turn..args.history + (i + 1) * args.turn].to_vec();

    ttft(&engine, model, history[..64].to_vec(), false)?; // warm-up
    let (_, _, reply) = ttft(&engine, model, history.clone(), true)?; // the conversation so far
    let continued = |i: usize| [history.clone(), reply.clone(), turn(i)].concat();
    // The next turn first, while the cache holds exactly the conversation so far (as a chat's
    // next message finds it, and as mlx-lm's prompt cache holds it); the cold run after it,
    // since its own entry would otherwise be the longest match and turn the continuation into
    // a branch off another turn.
    let (memory, memory_reused, _) = ttft(&engine, model, continued(1), true)?;
    let (cold, _, _) = ttft(&engine, model, continued(0), false)?;
    drop(engine); // a clean shutdown: sessions go to disk
    let (engine, model, _) = start(&dir)?;
    ttft(&engine, model, history[..64].to_vec(), false)?; // warm-up, no reuse
    let (disk, disk_reused, _) = ttft(&engine, model, continued(2), true)?;
    drop(engine);
    if args.cache_dir.is_none() {
        std::fs::remove_dir_all(&dir).ok();
    }

    let report = Report {
        history_tokens: history.len() + reply.len(),
        turn_tokens: args.turn,
        cold_ttft_ms: cold,
        memory_ttft_ms: memory,
        disk_ttft_ms: disk,
        memory_speedup: cold / memory,
        disk_speedup: cold / disk,
        memory_reused,
        disk_reused,
    };
    if args.json {
        println!("{}", serde_json::to_string_pretty(&report)?);
    } else {
        println!(
            "{} history + {} new tokens: first token cold {:.0} ms | from memory {:.0} ms ({:.1}x) | from disk after restart {:.0} ms ({:.1}x)",
            report.history_tokens, report.turn_tokens, cold, memory, report.memory_speedup, disk, report.disk_speedup
        );
    }
    Ok(std::process::ExitCode::SUCCESS)
}

fn tempfile_dir() -> std::io::Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join(format!("confab-bench-session-{}", std::process::id()));
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

#[derive(serde::Serialize)]
struct BranchStep {
    step: &'static str,
    prompt_tokens: usize,
    reused_tokens: usize,
    time_to_first_token_ms: f64,
    decode_tokens_per_s: f64,
}

/// One request of a --branches run: its step, and the tokens it generated.
/// Greedy, except a regenerate, which samples (a greedy regenerate would repeat the reply).
fn branch_step(engine: &Engine, model: ModelId, step: &'static str, prompt: Vec<u32>, gen: u32) -> anyhow::Result<(BranchStep, Vec<u32>)> {
    let mut sampling = SamplingParams::greedy();
    if step == "regenerate" {
        sampling.temperature = 1.0;
        sampling.seed = Some(7);
    }
    sampling.max_tokens = gen;
    let prompt_tokens = prompt.len();
    let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
    request.ignore_eos = true;
    let (mut reused_tokens, mut timings, mut tokens) = (0, Timings::default(), vec![]);
    for event in engine.generate(request) {
        match event {
            Event::Plan(plan) => reused_tokens = plan.reused_tokens,
            Event::Token { id, .. } => tokens.push(id),
            Event::Done { timings: t, .. } => timings = t,
            Event::Error(e) => return Err(e.into()),
            Event::Text(_) | Event::Canvas(_) | Event::Queued { .. } => {}
        }
    }
    let step = BranchStep {
        step,
        prompt_tokens,
        reused_tokens,
        time_to_first_token_ms: timings.time_to_first_token_ms,
        decode_tokens_per_s: timings.decode_tokens_per_s,
    };
    Ok((step, tokens))
}

/// A `--history`-token conversation, then its regenerate, an edit `--turn` tokens before its
/// end, and a next message after the regenerated reply, in memory only.
fn branches(args: &Args) -> anyhow::Result<std::process::ExitCode> {
    let prefix = PrefixOptions { dir: None, paged: !args.contiguous_kv, ..Default::default() };
    let engine = Engine::start(EngineOptions { prefix, ..Default::default() })?;
    let (model, info) = engine.load(args.model.path(), args.model.load_options()?, |_| {})?;
    let all = synthetic_prompt(args.history + 2 * args.turn, info.vocab_size);
    let history = all[..args.history].to_vec();
    let new_turn = all[args.history..args.history + args.turn].to_vec();
    let edit_turn = all[args.history + args.turn..].to_vec();

    branch_step(&engine, model, "warm-up", [&new_turn[..], &edit_turn[..]].concat(), 4)?; // shares nothing with the history
    let mut steps = vec![];
    let (first, _) = branch_step(&engine, model, "first", history.clone(), args.gen)?;
    steps.push(first);
    let (regenerate, reply) = branch_step(&engine, model, "regenerate", history.clone(), args.gen)?;
    steps.push(regenerate);
    let edited = [&history[..args.history - args.turn], &edit_turn[..]].concat();
    steps.push(branch_step(&engine, model, "edit", edited, args.gen)?.0);
    let next = [history, reply, new_turn].concat();
    steps.push(branch_step(&engine, model, "next message", next, args.gen)?.0);
    if args.json {
        println!("{}", serde_json::to_string_pretty(&steps)?);
    } else {
        for s in &steps {
            println!(
                "{:>12}: {} prompt tokens, {} reused | first token {:.0} ms | decode {:.1} tok/s",
                s.step, s.prompt_tokens, s.reused_tokens, s.time_to_first_token_ms, s.decode_tokens_per_s
            );
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}
