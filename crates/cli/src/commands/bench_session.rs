//! `confab bench-session`: what the prefix cache buys. A conversation of about
//! `--history` tokens continued by a `--turn`-token message: time to first token computed
//! cold, reused from memory, and reused from disk after a restart, in one run.

use confab_engine::cache::PrefixOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Prompt, Request};
use confab_engine::sample::SamplingParams;

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
            Event::Text(_) => {}
        }
    }
    Ok((ms, reused, tokens))
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let dir = tempfile_dir()?;
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
    std::fs::remove_dir_all(&dir).ok();

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
