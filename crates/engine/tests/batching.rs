//! Continuous batching: requests that run together give exactly the tokens they give alone
//! (greedy), whatever their prompt lengths and whenever they join; a request waits while the
//! running ones hold the memory it needs, and one that could never fit is refused.

use std::path::PathBuf;

use confab_engine::model::{Compute, Input, LoadOptions, Positions, Rows};
use confab_engine::runtime::{
    BatchOptions, Engine, EngineOptions, Event, Generation, MemoryBudget, ModelId, Prompt, QueueReason, ReadyModel, Request, StopReason,
};
use confab_engine::sample::SamplingParams;
use confab_engine::{EngineError, Remedy};
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::Array;

fn start(model: PathBuf, batch: BatchOptions) -> (Engine, ModelId) {
    // No prefix cache: each request computes its whole prompt, alone or batched.
    let mut options = EngineOptions { batch, ..Default::default() };
    options.prefix.enabled = false;
    let engine = Engine::start(options).unwrap();
    let (id, _) = engine.load(model, LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

fn tiny_llama() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/llama")
}

fn smollm2() -> PathBuf {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path
}

/// A greedy request for `prompt`, `max_tokens` long, prefilled in chunks of 16 (so a long
/// prompt takes several iterations, interleaved with the others' decode steps).
/// `penalized` adds a repetition penalty, which moves the row off the device-side pipeline
/// onto host sampling.
fn request(model: ModelId, prompt: Vec<u32>, max_tokens: u32, penalized: bool) -> Request {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = max_tokens;
    if penalized {
        sampling.repetition_penalty = 1.3;
    }
    let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
    request.ignore_eos = true;
    request.chunk_size = 16;
    request
}

fn tokens_of(events: impl Iterator<Item = Event>) -> Vec<u32> {
    let mut tokens = vec![];
    for event in events {
        match event {
            Event::Token { id, .. } => tokens.push(id),
            Event::Done { reason, .. } => assert_eq!(reason, StopReason::MaxTokens),
            Event::Error(e) => panic!("{e}"),
            _ => {}
        }
    }
    tokens
}

/// Waits for `n` tokens of `generation`, keeping them.
fn take_tokens(generation: &Generation, n: usize, into: &mut Vec<Event>) {
    let mut seen = 0;
    while seen < n {
        let event = generation.next().expect("the generation is still running");
        seen += matches!(event, Event::Token { .. }) as usize;
        into.push(event);
    }
}

/// Prompts of 5, 40, 100 and 23 tokens; the first runs alone for a while, the others join
/// while it (and each other) decode, one of them sampling on the host.
fn batched_matches_alone(model: PathBuf, vocab: u32) {
    let prompts: Vec<Vec<u32>> = [5usize, 40, 100, 23]
        .iter()
        .enumerate()
        .map(|(k, &n)| (0..n as u32).map(|i| 3 + (i * 7 + k as u32 * 13) % (vocab - 3)).collect())
        .collect();
    let max_tokens = [40u32, 30, 24, 36];
    let penalized = [false, false, false, true];
    let (engine, id) = start(model, BatchOptions::default());

    let alone: Vec<Vec<u32>> =
        (0..4).map(|i| tokens_of(engine.generate(request(id, prompts[i].clone(), max_tokens[i], penalized[i])))).collect();

    // Join at different steps: each next request arrives after the last one's third token.
    let mut events: Vec<Vec<Event>> = (0..4).map(|_| vec![]).collect();
    let mut running: Vec<Generation> = vec![];
    for i in 0..4 {
        running.push(engine.generate(request(id, prompts[i].clone(), max_tokens[i], penalized[i])));
        take_tokens(&running[i], 3, &mut events[i]);
    }
    for (i, generation) in running.into_iter().enumerate() {
        let mut all = std::mem::take(&mut events[i]);
        all.extend(generation);
        let batched = tokens_of(all.into_iter());
        assert_eq!(batched.len(), max_tokens[i] as usize);
        assert_eq!(batched, alone[i], "request {i} (prompt of {} tokens) batched differs from alone", prompts[i].len());
    }
}

#[test]
fn batched_greedy_decoding_matches_one_at_a_time_tiny_llama() {
    batched_matches_alone(tiny_llama(), 384);
}

fn tiny(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

/// Every family batches its decode steps: Qwen 3 (per-head q/k norms), 4-bit weights, Gemma 3
/// (sliding-window layers), Gemma 4 (sliding layers, KV-shared layers, per-layer inputs; and
/// its MoE variant), Qwen 3.5 (gated DeltaNet layers with recurrent state, gated attention) and
/// its MoE variants (Qwen3.5-MoE, Qwen3-Next), LFM2 (gated convolutions, each row with its own
/// window, beside attention with q/k norms). With `vocab` the fixture's vocabulary size.
const FAMILIES: [(&str, u32); 10] = [
    ("qwen3", 512),
    ("llama_mlx4", 384),
    ("gemma3", 320),
    ("gemma4", 400),
    ("gemma4_moe", 400),
    ("gemma4_ple_mlx4", 400),
    ("qwen3_5", 448),
    ("qwen3_5_moe", 416),
    ("qwen3_next", 480),
    ("lfm2", 384),
];

#[test]
fn other_families_match_one_at_a_time() {
    for (name, vocab) in FAMILIES {
        batched_matches_alone(tiny(name), vocab);
    }
}

/// The ops that read a layer's weights: Confab's CPU linear kernel, MLX's (quantized) matmuls
/// of stacked experts.
const WEIGHT_READS: [&str; 3] = ["ConfabCpuLinear", "GatherMM", "GatherQMM"];

/// The batch path, model by model: the model says it batches; a decode step of three rows at
/// different lengths (prompts of 5, 12 and 23 tokens: inside, at and past Gemma's 8-token
/// window) through `forward_batch` gives each row the logits `forward` gives it alone, step
/// after step (six steps, each row fed its own greedy choice); and the batched step's graph
/// holds as many weight-reading nodes as one row's step: the projections, MLPs, experts and
/// output head run once for the batch, not once per row. On the CPU kernels (Linux CI) the
/// logits are identical with float32 weights; 4-bit weights are summed in another order for one
/// row than for several by the CPU kernel (packed dot products, against widened blocks), so
/// there within `TOLERANCE` (the logits span about ±10), and the chosen tokens identical.
/// Elsewhere (a GPU, or `CONFAB_CPU_KERNELS=0`) products of one row and of several may take
/// different kernels: every row within `TOLERANCE`; and a weight-reading node cannot be told
/// from attention's matmuls by its name there, so the count is left out.
#[test]
fn a_batched_step_runs_the_weights_once_and_gives_each_row_its_own_logits() {
    use confab_engine::model;
    use confab_engine::state::SequenceState;
    const TOLERANCE: f32 = 1e-4;
    let max_diff = |a: &Array, b: &Array| -> f32 {
        let d = mlx_rs::ops::abs(mlx_rs::ops::subtract(a, b).unwrap()).unwrap();
        mlx_rs::ops::max(&d, None).unwrap().item_exact::<f32>()
    };
    let argmax = |logits: &Array| -> Vec<i32> {
        let next = mlx_rs::ops::indexing::argmax_axis(logits, -1, None).unwrap().as_dtype(mlx_rs::Dtype::Int32).unwrap();
        next.as_slice::<i32>().to_vec()
    };
    for (name, vocab) in FAMILIES {
        let loaded = model::load(&tiny(name), &LoadOptions::default()).unwrap();
        let m = loaded.model.as_ref();
        assert!(m.accepts().batches, "{name} decodes its rows one at a time");
        // Loading decides whether the CPU kernels run.
        let cpu_kernels = confab_engine::model::layers::cpu_linear::enabled();
        let tolerance = if loaded.quantized || !cpu_kernels { TOLERANCE } else { 0.0 };
        let mut alone: Vec<SequenceState> = [5u32, 12, 23]
            .iter()
            .enumerate()
            .map(|(k, &n)| {
                let prompt: Vec<i32> = (0..n).map(|i| 3 + ((i * 7 + k as u32 * 13) % (vocab - 3)) as i32).collect();
                let mut state = m.new_state();
                let logits = m.logits(&Array::from_slice(&prompt, &[1, n as i32]), &mut state).unwrap();
                mlx_rs::transforms::eval(state.arrays().into_iter().chain([&logits])).unwrap();
                state
            })
            .collect();
        let mut batched = alone.clone();
        let mut tokens = vec![7i32, 8, 9];
        for step in 0..6 {
            let each: Vec<Array> =
                alone.iter_mut().zip(&tokens).map(|(state, &t)| m.logits(&Array::from_slice(&[t], &[1, 1]), state).unwrap()).collect();
            let mut rows: Vec<&mut SequenceState> = batched.iter_mut().collect();
            let input = Array::from_slice(&tokens, &[3, 1]);
            let together =
                m.forward(Input::Tokens(&input), Rows::Batch(&mut rows), Compute::Logits(Positions::Last)).unwrap().into_logits().unwrap();
            if step == 0 && cpu_kernels {
                let reads = |a: &Array| graph_labels(a).iter().filter(|l| WEIGHT_READS.iter().any(|w| l.contains(w))).count();
                let (one, all) = (reads(&each[0]), reads(&together));
                assert!(one > 0, "{name}: no weight-reading node in a step's graph");
                assert_eq!(all, one, "{name}: a step of 3 rows reads the weights {all} times, one row's {one}");
            }
            assert_eq!(together.shape(), [3, m.config().vocab_size as i32]);
            for (i, logits) in each.iter().enumerate() {
                let d = max_diff(&together.index(i as i32..i as i32 + 1), logits);
                assert!(d <= tolerance, "{name}, step {step}, row {i}: batched logits differ from alone by {d}");
            }
            let chosen = argmax(&together);
            let alone_chosen: Vec<i32> = each.iter().flat_map(argmax).collect();
            assert_eq!(chosen, alone_chosen, "{name}, step {step}: batched rows chose other tokens than alone");
            // The rows' lengths stay their own.
            for (a, b) in alone.iter().zip(&batched) {
                assert_eq!(a.len(), b.len());
            }
            tokens = chosen;
        }
    }
}

#[test]
fn batched_greedy_decoding_matches_one_at_a_time_smollm2() {
    batched_matches_alone(smollm2(), 49152);
}

/// Bytes the tiny llama's state takes for any request (its 256 positions of context): 2 layers
/// × (keys + values) × 2 heads × 16 × 4 bytes per position.
const TINY_STATE_BYTES: usize = 256 * 2 * 2 * 2 * 16 * 4;

/// Bytes one prefill chunk of `chunk` tokens takes at `context` positions in the tiny llama
/// (`model::memory::prefill_activation_bytes`, worked by hand: hidden 64, 4 heads and 2 KV
/// heads of 16, intermediate 128, 384 tokens, float32).
fn tiny_activations(chunk: usize, context: usize) -> usize {
    4 * chunk * (4 * 64 + (4 + 2 * 2) * 16 + 4 * context + 3 * 128) + 4 * 384
}

fn bytes(n: usize) -> BatchOptions {
    BatchOptions { memory_budget: Some(MemoryBudget::Bytes(n as u64)), ..Default::default() }
}

#[test]
fn a_request_waits_while_the_running_ones_hold_its_memory() {
    // Each fits alone (27 and 17 prompt tokens in chunks of 16), not beside the other.
    let (first, second) = (TINY_STATE_BYTES + tiny_activations(16, 27), TINY_STATE_BYTES + tiny_activations(16, 17));
    let budget = first.max(second) + TINY_STATE_BYTES / 4;
    assert!(budget < 2 * TINY_STATE_BYTES);
    let (engine, id) = start(tiny_llama(), bytes(budget));
    let first = engine.generate(request(id, (3..30).collect(), 60, false));
    let second = engine.generate(request(id, (3..20).collect(), 10, false));
    // The second waits, and says so at once; it is admitted (its plan sent) only once the
    // first has finished.
    let queued = second.next();
    assert!(matches!(queued, Some(Event::Queued { reason: QueueReason::Memory, ahead: 0 })), "{queued:?}");
    let second_plan = second.next();
    assert!(matches!(second_plan, Some(Event::Plan(_))), "{second_plan:?}");
    let first_events: Vec<Event> = std::iter::from_fn(|| first.try_next()).collect();
    assert!(
        matches!(first_events.last(), Some(Event::Done { reason: StopReason::MaxTokens, .. })),
        "the first request had not finished when the second started"
    );
    assert_eq!(tokens_of(second).len(), 10);
}

#[test]
fn a_request_that_could_never_fit_is_refused_saying_what_to_change_and_the_engine_goes_on() {
    // Less than any request of this model needs (its buffers grow 256 positions at a time).
    let (engine, id) = start(tiny_llama(), bytes(TINY_STATE_BYTES / 2));
    for _ in 0..2 {
        let events: Vec<Event> = engine.generate(request(id, (3..30).collect(), 100, false)).collect();
        let [Event::Error(error @ EngineError::NeverFits(shortfall))] = events.as_slice() else { panic!("{events:?}") };
        // What to change, as facts each front door words its own way (the server's flags:
        // tests/server/test_openai.py); the engine's own words name no flag or pane.
        assert_eq!(shortfall.remedies(), [Remedy::LowerMaxTokens, Remedy::QuantizeKeysValues { bits: None }, Remedy::RaiseMemoryBudget]);
        let message = error.to_string();
        let needs = (TINY_STATE_BYTES + tiny_activations(16, 27)) as f64 / 1e6;
        for says in [
            format!("may need {needs:.0} MB"),
            "lower the reply's token limit".into(),
            "shorten the prompt".into(),
            "hold keys and values at 8 or 4 bits".into(),
            "raise the memory budget".into(),
        ] {
            assert!(message.contains(&says), "{message} does not say {says}");
        }
        assert!(!message.contains("--") && !message.contains("Settings"), "{message}");
    }
    // The engine still answers, and a request that fits runs.
    assert_eq!(engine.tokenize(id, Prompt::Tokens(vec![5, 6])).unwrap(), [5, 6]);
    let (engine, id) = start(tiny_llama(), bytes(TINY_STATE_BYTES + tiny_activations(16, 27)));
    assert_eq!(tokens_of(engine.generate(request(id, (3..30).collect(), 5, false))).len(), 5);
}

/// The rule against starvation: requests start in arrival order. A large request (a long
/// prompt, whose chunk's activations fill most of the budget) waits behind a running small
/// one; a small request that arrives after it would fit beside the running one, but does not
/// overtake it: it starts after the large one has.
#[test]
fn a_large_request_is_not_overtaken_by_small_ones_that_arrive_after_it() {
    let small = |k: u32| -> Vec<u32> { (0..10).map(|i| 3 + k + i).collect() };
    let large: Vec<u32> = (0..200).map(|i| 3 + (i * 7) % 380).collect();
    let large_needs = TINY_STATE_BYTES + tiny_activations(200, 200);
    let small_needs = TINY_STATE_BYTES + tiny_activations(10, 10);
    // The large one fits alone, not beside a small one; two small ones fit together.
    let budget = large_needs + TINY_STATE_BYTES / 2;
    assert!(2 * small_needs < budget && large_needs + TINY_STATE_BYTES > budget);
    let (engine, id) = start(tiny_llama(), bytes(budget));
    let first = engine.generate(request(id, small(0), 40, false));
    let mut first_events = vec![];
    take_tokens(&first, 1, &mut first_events);
    let mut large_request = request(id, large, 5, false);
    large_request.chunk_size = 200;
    let large = engine.generate(large_request);
    let later = engine.generate(request(id, small(20), 5, false));
    // Both wait for memory, the later one behind the large one.
    let later_queued = later.next();
    assert!(matches!(later_queued, Some(Event::Queued { reason: QueueReason::Memory, ahead: 1 })), "{later_queued:?}");
    let later_plan = later.next();
    assert!(matches!(later_plan, Some(Event::Plan(_))), "{later_plan:?}");
    let large_events: Vec<Event> = std::iter::from_fn(|| large.try_next()).collect();
    assert!(
        matches!(large_events.as_slice(), [Event::Queued { reason: QueueReason::Memory, ahead: 0 }, Event::Plan(_), ..]),
        "the later small request started before the large one: {large_events:?}"
    );
    first_events.extend(std::iter::from_fn(|| first.next()));
    assert!(matches!(first_events.last(), Some(Event::Done { reason: StopReason::MaxTokens, .. })));
    assert_eq!(tokens_of(later).len(), 5);
    assert_eq!(tokens_of(large_events.into_iter().chain(std::iter::from_fn(|| large.next()))).len(), 5);
}

/// A hybrid model's recurrent and convolution state counts in what a request needs: measured
/// once, it is what a request's `Done` reports.
#[test]
fn a_hybrid_models_fixed_state_is_measured_as_requests_hold_it() {
    let (engine, id) = start(tiny("qwen3_5"), BatchOptions::default());
    let events: Vec<Event> = engine.generate(request(id, (3..30).collect(), 3, false)).collect();
    let Some(Event::Done { usage, .. }) = events.last() else { panic!("{events:?}") };
    let fixed = usage.state_bytes.recurrent + usage.state_bytes.convolution;
    assert!(fixed > 0, "{:?}", usage.state_bytes);
    let model = ReadyModel::load(&tiny("qwen3_5"), &LoadOptions::default(), &mut |_| {}).unwrap();
    assert_eq!(model.fixed_state_bytes(), fixed);
}

/// Rows whose caches share buffers with a prefix-cache entry: two requests resume from one
/// cached conversation (clones of its buffers, cut back to the prompt they share) and compute
/// their last prompt token as a one-token step, so each writes into a buffer the entry and the
/// other row still hold, then decode together. A shared buffer must be copied, never written
/// into: both give the tokens they give on an engine without the cache, and so does a third
/// request continuing the entry afterwards.
#[test]
fn rows_resuming_one_cached_prefix_write_their_own_copies() {
    let shared: Vec<u32> = (0..40).map(|i| 3 + (i * 11) % 380).collect();
    let with_last = |t: u32| -> Vec<u32> { shared.iter().copied().chain([t]).collect() };
    let requests = [with_last(7), with_last(9)];
    let (plain, plain_id) = start(tiny_llama(), BatchOptions::default());
    let alone: Vec<Vec<u32>> = requests.iter().map(|p| tokens_of(plain.generate(request(plain_id, p.clone(), 12, false)))).collect();

    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(tiny_llama(), LoadOptions::default(), |_| {}).unwrap();
    let first = tokens_of(engine.generate(request(id, shared.clone(), 6, false)));
    assert!(!requests.iter().any(|p| p[40] == first[0]), "the entry must not continue into either prompt");
    let running: Vec<Generation> = requests.iter().map(|p| engine.generate(request(id, p.clone(), 12, false))).collect();
    for (i, generation) in running.into_iter().enumerate() {
        let events: Vec<Event> = generation.collect();
        let reused = events.iter().any(|e| matches!(e, Event::Plan(plan) if plan.reuse_source == "memory" && plan.reused_tokens == 40));
        assert!(reused, "request {i} did not resume from the cached conversation");
        assert_eq!(tokens_of(events.into_iter()), alone[i], "request {i} resumed from the cache differs from alone");
    }
    // The entry itself is as it was: continuing it gives what the plain engine gives.
    let whole: Vec<u32> = shared.iter().copied().chain(first.iter().copied()).collect();
    let after = tokens_of(engine.generate(request(id, whole.clone(), 8, false)));
    assert_eq!(after, tokens_of(plain.generate(request(plain_id, whole, 8, false))));
}

/// Rows decoded together keep states of their own, which the prefix cache stores when they
/// finish: for windows (Gemma 3, Gemma 4), recurrent state (Qwen 3.5) and convolution windows
/// (LFM2), two requests run
/// batched, then a third continues the first one's conversation (prompt, reply and two more
/// tokens). It resumes from the state the batched row left, at its full length, and gives
/// what an engine without the cache gives.
#[test]
fn rows_decoded_together_leave_states_the_cache_resumes() {
    for (name, vocab) in [("gemma3", 320u32), ("gemma4", 400), ("qwen3_5", 448), ("lfm2", 384)] {
        let prompt = |k: u32, n: u32| -> Vec<u32> { (0..n).map(|i| 3 + (i * 7 + k * 13) % (vocab - 3)).collect() };
        let (a, b) = (prompt(0, 11), prompt(1, 19));
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let (id, _) = engine.load(tiny(name), LoadOptions::default(), |_| {}).unwrap();
        let first = engine.generate(request(id, a.clone(), 12, false));
        let mut events = vec![];
        take_tokens(&first, 2, &mut events);
        let second = engine.generate(request(id, b, 12, false));
        events.extend(first);
        let reply = tokens_of(events.into_iter());
        assert_eq!(tokens_of(second).len(), 12);

        let continued: Vec<u32> = a.iter().chain(&reply).copied().chain([5, 6]).collect();
        let events: Vec<Event> = engine.generate(request(id, continued.clone(), 8, false)).collect();
        // The row fed its prompt and every reply token but the last (and the last too when a
        // step ahead had already run on it).
        let fed = a.len() + reply.len() - 1;
        let resumed = events.iter().any(|e| matches!(e, Event::Plan(plan) if plan.reuse_source == "memory" && plan.reused_tokens >= fed));
        assert!(resumed, "{name}: the continuation did not resume from the batched row's state ({fed} tokens)");
        let (plain, plain_id) = start(tiny(name), BatchOptions::default());
        assert_eq!(tokens_of(events.into_iter()), tokens_of(plain.generate(request(plain_id, continued, 8, false))), "{name}");
    }
}

#[test]
fn rows_stop_and_cancel_independently() {
    let (engine, id) = start(tiny_llama(), BatchOptions::default());
    let long = engine.generate(request(id, (3..20).collect(), 200, false));
    let short = engine.generate(request(id, (5..50).collect(), 5, false));
    let cancelled = engine.generate(request(id, (7..15).collect(), 200, true));
    let mut seen = vec![];
    take_tokens(&cancelled, 2, &mut seen);
    cancelled.cancel();
    let reason = |g: Generation| {
        g.filter_map(|e| match e {
            Event::Done { reason, usage, .. } => Some((reason, usage.generated)),
            _ => None,
        })
        .next()
        .unwrap()
    };
    let (why, generated) = reason(cancelled);
    assert_eq!(why, StopReason::Cancelled);
    assert!(generated < 200);
    assert_eq!(reason(short), (StopReason::MaxTokens, 5));
    assert_eq!(reason(long), (StopReason::MaxTokens, 200));
}

/// The labels of the graph nodes (operations) between `a` and what is already evaluated, from
/// MLX's dot export.
fn graph_labels(a: &Array) -> Vec<String> {
    use std::ffi::{c_char, c_int, CString};
    extern "C" {
        fn fopen(path: *const c_char, mode: *const c_char) -> *mut mlx_sys::FILE;
        fn fclose(file: *mut mlx_sys::FILE) -> c_int;
    }
    static EXPORTS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = EXPORTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let path = std::env::temp_dir().join(format!("confab-step-{}-{n}.dot", std::process::id()));
    let (c_path, mode) = (CString::new(path.to_str().unwrap()).unwrap(), CString::new("w").unwrap());
    // SAFETY: a fresh FILE for the export; the outputs vector holds a live array.
    unsafe {
        let file = fopen(c_path.as_ptr(), mode.as_ptr());
        assert!(!file.is_null());
        let namer = mlx_sys::mlx_node_namer_new();
        let outputs = mlx_sys::mlx_vector_array_new_value(a.as_ptr());
        mlx_sys::mlx_export_to_dot(file, namer, outputs);
        mlx_sys::mlx_vector_array_free(outputs);
        mlx_sys::mlx_node_namer_free(namer);
        fclose(file);
    }
    let dot = std::fs::read_to_string(&path).unwrap();
    match std::env::var("CONFAB_STEP_GRAPH") {
        Ok(keep) => drop(std::fs::rename(&path, keep)),
        Err(_) => drop(std::fs::remove_file(&path)),
    }
    // Operations are drawn as boxes, arrays as ovals.
    dot.lines().filter(|l| l.contains("shape=rectangle") || l.contains("shape=box")).map(str::to_owned).collect()
}

/// Not a test: the cost of one decode step of float32 SmolLM2-135M (or the model at
/// `CONFAB_STEP_MODEL`) for 1, 4 and 8 rows (prompts of 100–170 tokens, prefilled first; the
/// median of 24 steps, each evaluated before the next), and the graph nodes a step builds.
/// Rows of 4 and 8 are stepped both ways: batched (`forward_batch`) and row by row (one
/// `forward` each, as the scheduler steps models that do not batch). Speed is printed, never
/// asserted. Compare `CONFAB_CPU_DECODE=0` (rows attend one by one through MLX's RoPE and cache
/// updates).
/// `cargo test -p confab-engine --test batching -- --ignored --nocapture decode_step_cost`
#[test]
#[ignore]
fn decode_step_cost() {
    use confab_engine::model::{self, DtypeChoice};
    use confab_engine::state::SequenceState;
    use std::time::Instant;
    let path = std::env::var_os("CONFAB_STEP_MODEL").map_or_else(smollm2, PathBuf::from);
    let loaded = model::load(&path, &LoadOptions { dtype: DtypeChoice::Float32, ..Default::default() }).unwrap();
    let m = &loaded.model;
    let layers = m.config().num_layers;
    let vocab = m.config().vocab_size as i32;
    println!("{}", path.display());
    for (rows, batched) in [(1usize, false), (4, false), (4, true), (8, false), (8, true)] {
        let mut states: Vec<SequenceState> = (0..rows)
            .map(|r| {
                let mut state = m.new_state();
                let prompt: Vec<i32> = (0..100 + 10 * r as i32).map(|i| 3 + (i * 7) % (vocab.min(40000) - 3)).collect();
                m.logits(&Array::from_slice(&prompt, &[1, prompt.len() as i32]), &mut state).unwrap().eval().unwrap();
                state
            })
            .collect();
        let mut tokens = Array::from_slice(&vec![42i32; rows], &[rows as i32, 1]);
        let mut times = vec![];
        let mut nodes = 0;
        for step in 0..28 {
            let start = Instant::now();
            let logits = if batched {
                let mut refs: Vec<&mut SequenceState> = states.iter_mut().collect();
                m.forward(Input::Tokens(&tokens), Rows::Batch(&mut refs), Compute::Logits(Positions::Last)).unwrap().into_logits().unwrap()
            } else {
                let each: Vec<Array> =
                    states.iter_mut().enumerate().map(|(i, s)| m.logits(&tokens.index(i as i32..i as i32 + 1), s).unwrap()).collect();
                mlx_rs::ops::concatenate(&each, 0).unwrap()
            };
            let next = mlx_rs::ops::indexing::argmax_axis(&logits, -1, None).unwrap().as_dtype(mlx_rs::Dtype::Int32).unwrap();
            if step == 0 {
                nodes = graph_labels(&next).len();
            }
            next.eval().unwrap();
            if step >= 4 {
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
            tokens = next.reshape(&[rows as i32, 1]).unwrap();
        }
        times.sort_by(|a, b| a.partial_cmp(b).unwrap());
        let ms = times[times.len() / 2];
        println!(
            "{rows} rows {:10}: {ms:6.1} ms a step ({:5.1} tok/s), {nodes} graph nodes ({:.1} per layer per row)",
            if batched { "batched" } else { "row by row" },
            rows as f64 * 1e3 / ms,
            nodes as f64 / (layers * rows) as f64
        );
    }
}
