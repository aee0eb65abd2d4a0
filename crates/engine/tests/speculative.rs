//! Speculative decoding (prompt lookup): a greedy reply is token for token the one plain
//! decoding gives, on the tiny fixtures and the default model, wherever the reply ends (EOS, a
//! stop string, max_tokens inside an accepted run); proposals are accepted where the reply
//! quotes its prompt; the prefix cache serves a follow-up after a speculative reply as a cold
//! run computes it; and the plan says why a request cannot speculate.

mod common;

use std::path::PathBuf;

use common::{reply as run, Reply as Outcome};

use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, ModelId, Prompt, PromptLookup, Request, Speculative, StopReason};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_paths::{AppPaths, DefaultModel};

fn tiny(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn smollm2() -> PathBuf {
    let path = DefaultModel::manifest().path(&AppPaths::from_env());
    assert!(path.exists(), "{} is missing: run scripts/setup.sh", path.display());
    path
}

fn load(path: PathBuf) -> (Engine, ModelId) {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(path, LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

const LOOKUP: Speculative = Speculative::PromptLookup(PromptLookup { ngram: 3, max_draft: 8 });

/// The request as it is, and with prompt lookup: the same reply, token for token and in text,
/// ending for the same reason. Returns the speculative run.
fn same_with_lookup(engine: &Engine, request: &Request) -> Outcome {
    let plain = run(engine, Request { speculative: None, reuse_prefix: false, ..request.clone() });
    let fast = run(engine, Request { speculative: Some(LOOKUP), reuse_prefix: false, ..request.clone() });
    assert_eq!(plain.plan.speculative, None);
    assert_eq!(fast.plan.speculative, Some("prompt_lookup"), "declined: {:?}", fast.plan.speculative_declined);
    assert_eq!(fast.ids, plain.ids, "speculative ids differ from plain decoding");
    assert_eq!(fast.text, plain.text);
    assert_eq!(fast.reason, plain.reason);
    assert_eq!(fast.usage.generated, plain.usage.generated);
    assert!(fast.usage.draft_accepted <= fast.usage.draft_proposed);
    assert_eq!((plain.usage.draft_proposed, plain.usage.draft_accepted), (0, 0));
    fast
}

fn greedy(max_tokens: u32) -> SamplingParams {
    SamplingParams { max_tokens, ..SamplingParams::greedy() }
}

/// A prompt that repeats itself, so that lookups find earlier occurrences.
fn repeating_ids() -> Vec<u32> {
    let phrase: Vec<u32> = (20..44).collect();
    let mut ids = phrase.clone();
    ids.extend(&phrase);
    ids.extend(&phrase[..10]);
    ids
}

#[test]
fn tiny_fixtures_give_the_plain_greedy_reply() {
    for name in ["llama", "qwen3"] {
        let (engine, model) = load(tiny(name));
        let mut request = Request::new(model, Prompt::Tokens(repeating_ids()), greedy(48));
        request.ignore_eos = true;
        request.chunk_size = 16;
        let fast = same_with_lookup(&engine, &request);
        assert!(fast.usage.draft_proposed > 0, "{name}: a repeating prompt gives proposals");
        eprintln!("{name}: {} of {} proposed tokens accepted", fast.usage.draft_accepted, fast.usage.draft_proposed);
        // Every length up to there ends the same way (max_tokens inside an accepted run).
        for max_tokens in [1, 2, 5, 11, 17] {
            request.sampling.max_tokens = max_tokens;
            same_with_lookup(&engine, &request);
        }
    }
}

fn quoting_request(model: ModelId, max_tokens: u32) -> Request {
    let text = "The quick brown fox jumps over the lazy dog. A journey of a thousand miles begins with a single step. \
                All that glitters is not gold; all who wander are not lost.";
    let message = format!("Repeat this text exactly, with nothing before or after it:\n\n{text}");
    Request::new(model, Prompt::Chat(vec![ChatMessage::user(message)]), greedy(max_tokens))
}

#[test]
fn the_default_model_quoting_its_prompt_accepts_proposals_and_replies_as_plain_decoding() {
    let (engine, model) = load(smollm2());
    let fast = same_with_lookup(&engine, &quoting_request(model, 64));
    eprintln!("SmolLM2: {} of {} proposed tokens accepted; {:?}", fast.usage.draft_accepted, fast.usage.draft_proposed, fast.text);
    assert!(fast.usage.draft_accepted > 0, "quoting the prompt accepts proposals: {:?}", fast.text);
    // Ends inside accepted runs: a stop string, and max_tokens.
    let mut stopped = quoting_request(model, 64);
    stopped.sampling.stop = vec!["thousand".into()];
    let fast = same_with_lookup(&engine, &stopped);
    assert_eq!(fast.reason, StopReason::StopString, "{:?}", fast.text);
    for max_tokens in [3, 9, 21] {
        same_with_lookup(&engine, &quoting_request(model, max_tokens));
    }
}

#[test]
fn after_a_speculative_reply_the_prefix_cache_serves_a_follow_up_as_a_cold_run() {
    let (engine, model) = load(smollm2());
    let first = quoting_request(model, 48);
    let Prompt::Chat(mut messages) = first.prompt.clone() else { unreachable!() };
    let reply = run(&engine, Request { speculative: Some(LOOKUP), ..first });
    assert!(reply.usage.draft_accepted > 0);
    messages.push(ChatMessage::assistant(reply.text.clone()));
    messages.push(ChatMessage::user("Now repeat only its second sentence."));
    let follow_up = Request { speculative: Some(LOOKUP), ..Request::new(model, Prompt::Chat(messages), greedy(24)) };
    let cached = run(&engine, follow_up.clone());
    assert!(
        cached.plan.reused_tokens > reply.plan.prompt_tokens,
        "the follow-up reuses the state the speculative reply left: {} of {} tokens",
        cached.plan.reused_tokens,
        cached.plan.prompt_tokens
    );
    let cold = run(&engine, Request { reuse_prefix: false, speculative: None, ..follow_up });
    assert_eq!(cold.plan.reused_tokens, 0);
    assert_eq!(cached.ids, cold.ids, "a state left by speculative steps serves the follow-up as computing it afresh does");
}

#[test]
fn the_plan_says_why_a_request_goes_without_speculation() {
    let (engine, model) = load(tiny("llama"));
    let declined = |request: Request| run(&engine, request).plan.speculative_declined.unwrap_or_default();
    let request = || Request { speculative: Some(LOOKUP), ..Request::new(model, Prompt::Tokens(repeating_ids()), greedy(4)) };
    assert!(declined(Request { speculative: None, ..request() }).contains("did not ask"));
    let mut nothing = request();
    nothing.speculative = Some(Speculative::PromptLookup(PromptLookup { ngram: 3, max_draft: 0 }));
    assert!(declined(nothing).contains("proposes nothing"));
    assert_eq!(run(&engine, request()).plan.speculative_declined, None);

    // Rotating windows cannot be cut back yet.
    let (engine, model) = load(tiny("gemma3"));
    let plan = run(&engine, Request { speculative: Some(LOOKUP), ..Request::new(model, Prompt::Tokens(repeating_ids()), greedy(4)) }).plan;
    assert_eq!(plan.speculative, None);
    assert!(plan.speculative_declined.unwrap_or_default().contains("cannot be cut back"));
}

/// The request as it is, and with `method`: the same reply, token for token.
fn same_with(engine: &Engine, request: &Request, method: Speculative) -> Outcome {
    let plain = run(engine, Request { speculative: None, reuse_prefix: false, ..request.clone() });
    let fast = run(engine, Request { speculative: Some(method), reuse_prefix: false, ..request.clone() });
    assert_eq!(fast.plan.speculative, Some(method.name()), "declined: {:?}", fast.plan.speculative_declined);
    assert_eq!(fast.ids, plain.ids, "speculative ids differ from plain decoding");
    assert_eq!((&fast.text, fast.reason), (&plain.text, plain.reason));
    fast
}

#[test]
fn a_draft_model_sharing_the_vocabulary_gives_the_plain_greedy_reply() {
    // Tiny Llama and tiny SmolLM3 share a tokenizer; their weights differ.
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (target, _) = engine.load(tiny("llama"), LoadOptions::default(), |_| {}).unwrap();
    let (draft, _) = engine.load(tiny("smollm3"), LoadOptions::default(), |_| {}).unwrap();
    let mut request = Request::new(target, Prompt::Tokens(repeating_ids()), greedy(40));
    request.ignore_eos = true;
    request.chunk_size = 16;
    for max_draft in [1, 4] {
        let fast = same_with(&engine, &request, Speculative::DraftModel { model: draft, max_draft });
        assert!(fast.usage.draft_proposed > 0);
        eprintln!("tiny smollm3 for llama, {max_draft}: {} of {} accepted", fast.usage.draft_accepted, fast.usage.draft_proposed);
        // The model drafting for itself agrees with (nearly) all it proposes.
        let own = same_with(&engine, &request, Speculative::DraftModel { model: target, max_draft });
        eprintln!("tiny llama for itself, {max_draft}: {} of {} accepted", own.usage.draft_accepted, own.usage.draft_proposed);
        assert!(own.usage.draft_accepted * 10 >= own.usage.draft_proposed * 9, "a model drafting for itself");
    }

    // Another vocabulary, and a draft whose state cannot be cut back, are declined.
    let (other, _) = engine.load(tiny("qwen3"), LoadOptions::default(), |_| {}).unwrap();
    let (convolution, _) = engine.load(tiny("lfm2"), LoadOptions::default(), |_| {}).unwrap();
    for (draft, why) in [(other, "vocabulary"), (convolution, "cannot be cut back")] {
        let asked = Request { speculative: Some(Speculative::DraftModel { model: draft, max_draft: 4 }), ..request.clone() };
        let plan = run(&engine, asked).plan;
        assert_eq!(plan.speculative, None);
        assert!(plan.speculative_declined.as_deref().unwrap_or_default().contains(why), "{:?}", plan.speculative_declined);
    }
}

#[test]
fn the_default_model_drafting_for_itself_gives_the_plain_greedy_reply() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(smollm2(), LoadOptions::default(), |_| {}).unwrap();
    let fast = same_with(&engine, &quoting_request(model, 48), Speculative::DraftModel { model, max_draft: 4 });
    eprintln!("SmolLM2 for itself: {} of {} accepted", fast.usage.draft_accepted, fast.usage.draft_proposed);
    assert!(fast.usage.draft_accepted * 10 >= fast.usage.draft_proposed * 9, "a model drafting for itself");
}

/// How often each token comes at each of the reply's positions 1.. (position 0 comes from the
/// prefill, before any proposal), over `runs` seeds; and the proposals accepted in all.
fn frequencies(engine: &Engine, request: &Request, runs: u64) -> (Vec<std::collections::HashMap<u32, f64>>, usize) {
    let positions = request.sampling.max_tokens as usize - 1;
    let mut counts = vec![std::collections::HashMap::new(); positions];
    let mut accepted = 0;
    for seed in 0..runs {
        let mut request = request.clone();
        request.sampling.seed = Some(seed);
        let out = run(engine, request);
        assert_eq!(out.ids.len(), positions + 1);
        for (i, &id) in out.ids[1..].iter().enumerate() {
            *counts[i].entry(id).or_insert(0.0) += 1.0 / runs as f64;
        }
        accepted += out.usage.draft_accepted;
    }
    (counts, accepted)
}

/// Total variation distance between two distributions.
fn distance(a: &std::collections::HashMap<u32, f64>, b: &std::collections::HashMap<u32, f64>) -> f64 {
    let ids: std::collections::BTreeSet<u32> = a.keys().chain(b.keys()).copied().collect();
    ids.iter().map(|id| (a.get(id).unwrap_or(&0.0) - b.get(id).unwrap_or(&0.0)).abs()).sum::<f64>() / 2.0
}

/// Sampling with proposals keeps plain sampling's distribution: the reply's tokens at each
/// position come as often (400 seeds each; the sampler's processing on: logit bias,
/// repetition penalty, temperature, top-k, top-p, min-p). Tolerance: a total variation
/// distance of 0.08 per position. Here each position has two or three likely tokens; two
/// samples of 400 from one such distribution differ by about 0.02 (0.002 to 0.042 measured), and
/// a verifier that keeps every proposal the model could choose (no min(1, p/q)) measured 0.15
/// and 0.23 with prompt lookup.
#[test]
fn sampling_with_proposals_keeps_the_distribution_of_plain_sampling() {
    const RUNS: u64 = 400;
    const TOLERANCE: f64 = 0.08;
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(tiny("llama"), LoadOptions::default(), |_| {}).unwrap();
    let (draft, _) = engine.load(tiny("smollm3"), LoadOptions::default(), |_| {}).unwrap();
    // A random tiny model rarely chooses what its prompt holds: an equal bias on eight of the
    // prompt's tokens (large enough that only they are left, their odds as the model gives
    // them) keeps it to them, and the prompt ends with its own replies, so that proposals from
    // the prompt (and the draft's) are likely.
    let logit_bias = (20..28).map(|id| (id, 100.0)).collect();
    let sampling = SamplingParams {
        temperature: 1.0,
        top_k: 8,
        top_p: 0.95,
        min_p: 0.02,
        repetition_penalty: 1.1,
        logit_bias,
        max_tokens: 4,
        ..SamplingParams::greedy()
    };
    let mut prompt = repeating_ids();
    for seed in 1000..1006 {
        let sampled = SamplingParams { seed: Some(seed), max_tokens: 8, ..sampling.clone() };
        prompt.extend(run(&engine, Request { ignore_eos: true, ..Request::new(model, Prompt::Tokens(repeating_ids()), sampled) }).ids);
    }
    let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
    request.ignore_eos = true;
    request.reuse_prefix = false;
    let (plain, _) = frequencies(&engine, &request, RUNS);
    for method in [LOOKUP, Speculative::DraftModel { model: draft, max_draft: 3 }, Speculative::DraftModel { model, max_draft: 3 }] {
        let asked = Request { speculative: Some(method), ..request.clone() };
        assert_eq!(run(&engine, asked.clone()).plan.speculative, Some(method.name()));
        let (fast, accepted) = frequencies(&engine, &asked, RUNS);
        let distances: Vec<f64> = plain.iter().zip(&fast).map(|(a, b)| distance(a, b)).collect();
        eprintln!("{method:?}: {accepted} proposals accepted; distances per position {distances:.3?}");
        assert!(accepted > 0, "{method:?}: the accept path ran");
        assert!(distances.iter().all(|&d| d <= TOLERANCE), "{method:?}: {distances:?} over {TOLERANCE}");
    }
}
