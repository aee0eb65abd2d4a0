//! Speculative decoding (prompt lookup, draft models): a greedy reply is token for token the one
//! plain decoding gives, on the tiny fixtures and the default model, wherever the reply ends
//! (EOS, a stop string, max_tokens inside an accepted run), on every kind of state (keys and
//! values, rotating windows, recurrent and convolution state, MoE), alone and in a batch that
//! rows join at different steps; proposals are accepted where the reply quotes its prompt; the
//! prefix cache serves a follow-up after a speculative reply as a cold run computes it; and the
//! plan says why a request cannot speculate.

mod common;

use std::path::PathBuf;

use common::{reply as run, take_tokens, Reply as Outcome};

use confab_engine::model::{Compute, Input, LoadOptions, Positions, Rows};
use confab_engine::runtime::{
    Engine, EngineOptions, Event, Generation, ModelId, Prompt, PromptLookup, Request, Speculative, StopReason, Usage,
};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_paths::{AppPaths, DefaultModel};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::Array;

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

#[test]
fn a_verifying_pass_scores_each_position_as_the_decode_step_there() {
    // The default model (packed 4-bit weights, full keys/values): a pass of a few positions
    // takes the decode kernels and the several-row products, so each position's logits are
    // bit for bit the ones plain decoding computes there. A greedy reply is then the plain
    // one whatever the logits' margins.
    let model = confab_engine::model::load(&smollm2(), &LoadOptions::default()).unwrap().model;
    let prompt: Vec<u32> = repeating_ids();
    let fed: Vec<u32> = vec![450, 1138, 30, 2887, 314, 260, 1762, 28];
    let prefilled = || {
        let mut state = model.new_state();
        model.logits(&Array::from_slice(&prompt, &[1, prompt.len() as i32]), &mut state).unwrap().eval().unwrap();
        state
    };
    let mut plain = prefilled();
    let stepped: Vec<Vec<f32>> = fed
        .iter()
        .map(|&t| {
            let logits = model.logits(&Array::from_slice(&[t], &[1, 1]), &mut plain).unwrap();
            logits.reshape(&[-1]).unwrap().as_slice::<f32>().to_vec()
        })
        .collect();
    for width in [2, 5, fed.len()] {
        let mut verifying = prefilled();
        let tokens = Array::from_slice(&fed[..width], &[1, width as i32]);
        let every = model
            .forward(Input::Tokens(&tokens), Rows::One(&mut verifying), Compute::Logits(Positions::Every))
            .unwrap()
            .into_logits()
            .unwrap();
        for (i, want) in stepped[..width].iter().enumerate() {
            let got = every.index((0, i as i32)).as_slice::<f32>().to_vec();
            assert!(got == *want, "width {width}, position {i}: the pass's logits are not the decode step's");
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

    // Rotating windows are taken back too: gemma3 speculates.
    let (engine, model) = load(tiny("gemma3"));
    let plan = run(&engine, Request { speculative: Some(LOOKUP), ..Request::new(model, Prompt::Tokens(repeating_ids()), greedy(4)) }).plan;
    assert_eq!((plan.speculative, plan.speculative_declined), (Some("prompt_lookup"), None));
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

    // A draft with another vocabulary is declined.
    let (other, _) = engine.load(tiny("qwen3"), LoadOptions::default(), |_| {}).unwrap();
    let asked = Request { speculative: Some(Speculative::DraftModel { model: other, max_draft: 4 }), ..request.clone() };
    let plan = run(&engine, asked).plan;
    assert_eq!(plan.speculative, None);
    assert!(plan.speculative_declined.as_deref().unwrap_or_default().contains("vocabulary"), "{:?}", plan.speculative_declined);
}

/// A draft that would propose other tokens than its ids say to the model is refused at load,
/// the mismatch named: another vocabulary's size, or the same size with a token moved.
#[test]
fn a_draft_with_another_vocabulary_is_refused_at_load() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (target, _) = engine.load(tiny("llama"), LoadOptions::default(), |_| {}).unwrap();
    let refused = |path: &std::path::Path| match engine.load_draft(target, path, LoadOptions::default(), |_| {}) {
        Err(e @ confab_engine::EngineError::DraftVocabulary { .. }) => e.to_string(),
        other => panic!("{} was not refused for its vocabulary: {other:?}", path.display()),
    };
    let message = refused(&tiny("qwen3"));
    assert!(message.contains("qwen3") && message.contains("its vocabulary differs") && message.contains("tokens against"), "{message}");

    // The same size, two tokens' ids swapped: the first id that differs is named.
    let moved = common::copy_of_fixture("llama");
    let file = moved.path().join("tokenizer.json");
    let mut tokenizer = common::json(&file);
    let vocab = tokenizer["model"]["vocab"].as_object_mut().unwrap();
    let (a, b) = (vocab["¤"].clone(), vocab["¥"].clone());
    (vocab["¤"], vocab["¥"]) = (b, a);
    std::fs::write(&file, tokenizer.to_string()).unwrap();
    let message = refused(moved.path());
    assert!(message.contains("token 100 is \"¥\" in the draft but \"¤\" in the model"), "{message}");

    // One sharing the vocabulary loads, and drafts.
    let (draft, _) = engine.load_draft(target, tiny("smollm3"), LoadOptions::default(), |_| {}).unwrap();
    let mut request = Request::new(target, Prompt::Tokens(repeating_ids()), greedy(8));
    request.speculative = Some(Speculative::DraftModel { model: draft, max_draft: 2 });
    assert_eq!(run(&engine, request).plan.speculative, Some("draft_model"));
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

/// Families with every kind of state: keys and values (llama), rotating windows (gemma3,
/// gemma4, gpt_oss's sliding layers; the tiny ones hold 8 positions, the prompts are longer),
/// Qwen3.5's recurrent and convolution state, LFM2's short-convolution window, and MoE
/// (qwen3_5_moe, gpt_oss).
const EVERY_STATE_KIND: [&str; 7] = ["llama", "gemma3", "gemma4", "qwen3_5", "lfm2", "gpt_oss", "qwen3_5_moe"];

/// A prompt that repeats `phrase_len` tokens from `first` three times and a half.
fn repeating(first: u32, phrase_len: u32) -> Vec<u32> {
    let phrase: Vec<u32> = (first..first + phrase_len).collect();
    let mut ids = [phrase.clone(), phrase.clone(), phrase.clone()].concat();
    ids.extend(&phrase[..phrase_len as usize / 2]);
    ids
}

/// Greedy sampling confined to the prompt's tokens `first..first + 6` (an equal bias on each,
/// so the model's own odds choose among them), with a repetition penalty so that a tiny model
/// does not settle on one token: its reply repeats itself enough that prompt lookup proposes
/// often, and is right only sometimes, so rejected suffixes are taken back often.
fn confined(first: u32, max_tokens: u32) -> SamplingParams {
    let logit_bias = (first..first + 6).map(|id| (id, 100.0)).collect();
    SamplingParams { logit_bias, repetition_penalty: 1.5, ..greedy(max_tokens) }
}

/// `prompt` followed by traps for prompt lookup under `confined(first, ..)`: whichever token t
/// of the set the reply starts with, the prompt's last two tokens and t occurred before,
/// followed by t and then tokens outside the set. Lookup proposes them at the first step: the
/// first kept where the model repeats t, the rest always rejected.
fn trapped(first: u32, mut prompt: Vec<u32>) -> Vec<u32> {
    let (a, b, outside) = (first + 6, first + 7, first + 8);
    for t in first..first + 6 {
        prompt.extend([a, b, t, t, outside, outside + 1]);
    }
    prompt.extend([a, b]);
    prompt
}

/// Biases small enough that the tiny models' own choice often stands (measured: 1.5 changes
/// some of gemma4's choices, 4.0 some of every other family's).
const NUDGES: [f32; 2] = [1.5, 4.0];

/// A draft of another model sharing the family's vocabulary, where the tiny fixtures have one.
fn other_draft(name: &str) -> Option<&'static str> {
    match name {
        "llama" | "gpt_oss" => Some("lfm2"),
        "lfm2" => Some("gpt_oss"),
        "qwen3_5" => Some("qwen2"),
        "gemma4" => Some("gemma4_moe"),
        "gemma3" => Some("gemma3_v4"),
        _ => None,
    }
}

#[test]
fn every_state_kind_gives_the_plain_greedy_reply_alone() {
    for name in EVERY_STATE_KIND {
        let (engine, model) = load(tiny(name));
        let mut request = Request::new(model, Prompt::Tokens(trapped(20, repeating_ids())), confined(20, 40));
        request.ignore_eos = true;
        request.chunk_size = 16;
        let lookup = same_with_lookup(&engine, &request);
        let u = &lookup.usage;
        eprintln!("{name}: lookup {} of {} accepted in {} passes", u.draft_accepted, u.draft_proposed, u.draft_steps);
        assert!(u.draft_steps > 0, "{name}: prompt lookup proposes");
        let mut rejected = u.draft_proposed - u.draft_accepted;
        // The model drafting for itself: the draft's state (of the same kind) goes along. A
        // greedy draft proposes by its own logits, without the request's bias: nudged by a
        // small bias, the model agrees with runs of its draft and then not.
        let unbiased = Request { sampling: greedy(40), ..request.clone() };
        let own = same_with(&engine, &unbiased, Speculative::DraftModel { model, max_draft: 4 });
        assert!(own.usage.draft_accepted > 0, "{name}: a model drafting for itself has proposals accepted");
        let (mut kept, mut proposed) = (0, 0);
        for nudge in NUDGES {
            let logit_bias = (20..80).step_by(3).map(|id| (id, nudge)).collect();
            let nudged = Request { sampling: SamplingParams { logit_bias, ..greedy(40) }, ..request.clone() };
            let u = same_with(&engine, &nudged, Speculative::DraftModel { model, max_draft: 4 }).usage;
            eprintln!(
                "{name}: nudged by {nudge}, drafting for itself {} of {} accepted in {} passes",
                u.draft_accepted, u.draft_proposed, u.draft_steps
            );
            (kept, proposed) = (kept + u.draft_accepted, proposed + u.draft_proposed);
        }
        assert!(kept > 0 && proposed > kept, "{name}: runs of proposals kept, then one rejected: {kept} of {proposed}");
        // Another model's draft: both states take back what it got wrong.
        if let Some(other) = other_draft(name) {
            let (draft, _) = engine.load(tiny(other), LoadOptions::default(), |_| {}).unwrap();
            let fast = same_with(&engine, &unbiased, Speculative::DraftModel { model: draft, max_draft: 3 });
            let u = &fast.usage;
            eprintln!("{name}: {other} drafting {} of {} accepted in {} passes", u.draft_accepted, u.draft_proposed, u.draft_steps);
            rejected += u.draft_proposed - u.draft_accepted;
        }
        assert!(rejected > 0, "{name}: rejected proposals were taken back");
        for max_tokens in [1, 6, 13] {
            request.sampling.max_tokens = max_tokens;
            same_with_lookup(&engine, &request);
        }
    }
}

/// Runs `events` to their end: the ids and the usage.
fn finished(events: impl Iterator<Item = Event>) -> (Vec<u32>, Usage) {
    let (mut ids, mut usage) = (vec![], None);
    for event in events {
        match event {
            Event::Token { id, .. } => ids.push(id),
            Event::Done { usage: u, .. } => usage = Some(u),
            Event::Error(e) => panic!("{e}"),
            _ => {}
        }
    }
    (ids, usage.expect("a Done event"))
}

/// Rows of different prompt lengths join a batch at different steps (each after the last one's
/// third token): two with prompt lookup, one with the model drafting for itself, one plain.
/// Each gives the tokens plain greedy decoding gives it alone: two rows verify proposals of
/// different lengths in shared passes (padded, the padding taken back); four step plainly
/// once the batch is larger than the engine verifies together, whatever they proposed before.
#[test]
fn rows_in_a_batch_verify_together_and_give_their_plain_replies() {
    for name in EVERY_STATE_KIND {
        let (engine, model) = load(tiny(name));
        let prompts = [trapped(20, repeating(20, 6)), trapped(50, repeating(50, 11)), trapped(90, repeating(90, 17)), repeating(130, 5)];
        let max_tokens = [36u32, 30, 24, 28];
        let methods = [Some(LOOKUP), Some(Speculative::DraftModel { model, max_draft: 3 }), Some(LOOKUP), None];
        let request = |i: usize, speculative: Option<Speculative>| {
            let mut r = Request::new(model, Prompt::Tokens(prompts[i].clone()), greedy(max_tokens[i]));
            r.ignore_eos = true;
            r.chunk_size = 16;
            r.reuse_prefix = false;
            r.speculative = speculative;
            r.sampling = match i {
                // The model drafting for itself proposes by its own logits: nudged, it agrees
                // with runs of them.
                1 => SamplingParams { logit_bias: (20..80).step_by(3).map(|id| (id, NUDGES[1])).collect(), ..greedy(max_tokens[i]) },
                _ => confined(prompts[i][0], max_tokens[i]),
            };
            r
        };
        let alone: Vec<Vec<u32>> = (0..4).map(|i| finished(engine.generate(request(i, None))).0).collect();
        for rows in [2, 4] {
            let mut events: Vec<Vec<Event>> = (0..rows).map(|_| vec![]).collect();
            let mut running: Vec<Generation> = vec![];
            for i in 0..rows {
                running.push(engine.generate(request(i, methods[i])));
                take_tokens(&running[i], 3, &mut events[i]);
            }
            let mut steps = 0;
            for (i, generation) in running.into_iter().enumerate() {
                let mut all = std::mem::take(&mut events[i]);
                all.extend(generation);
                let (ids, usage) = finished(all.into_iter());
                let u = &usage;
                eprintln!(
                    "{name}, {rows} rows, row {i}: {} of {} accepted in {} passes",
                    u.draft_accepted, u.draft_proposed, u.draft_steps
                );
                assert_eq!(ids, alone[i], "{name}: row {i} ({:?}) of {rows} differs from plain decoding alone", methods[i]);
                steps += usage.draft_steps;
            }
            assert!(steps > 0, "{name}: rows verified proposals");
        }
    }
}

/// A reply decoded speculatively leaves a state (and checkpoints) a follow-up resumes from,
/// as a cold run computes it, on every kind of state.
#[test]
fn a_follow_up_resumes_what_speculative_steps_left_on_every_state_kind() {
    for name in EVERY_STATE_KIND {
        let (engine, model) = load(tiny(name));
        let prompt = trapped(30, repeating(30, 9));
        let mut first = Request::new(model, Prompt::Tokens(prompt.clone()), confined(30, 20));
        first.ignore_eos = true;
        first.chunk_size = 16;
        first.speculative = Some(LOOKUP);
        let reply = run(&engine, first.clone());
        assert!(reply.usage.draft_steps > 0, "{name}: the first reply verified proposals");
        let follow_up_ids = [prompt.clone(), reply.ids.clone(), (30..36).collect()].concat();
        let follow_up = Request { prompt: Prompt::Tokens(follow_up_ids), ..first };
        let cached = run(&engine, follow_up.clone());
        assert!(
            cached.plan.reused_tokens > prompt.len(),
            "{name}: the follow-up resumes the state the speculative reply left: {} of {} tokens",
            cached.plan.reused_tokens,
            cached.plan.prompt_tokens
        );
        let cold = run(&engine, Request { reuse_prefix: false, speculative: None, ..follow_up });
        assert_eq!(cold.plan.reused_tokens, 0);
        assert_eq!(cached.ids, cold.ids, "{name}: a resumed speculative state serves the follow-up as computing it afresh does");
    }
}

/// Qwen3.5 checkpoints carrying a multi-token-prediction head (tests/reference/make_qwen3_5_mtp.py):
/// dense and MoE, recurrent state in both.
const WITH_MTP: [&str; 2] = ["qwen3_5_mtp", "qwen3_5_moe_mtp"];

const MTP: Speculative = Speculative::Mtp { max_draft: 3 };

/// The head drafts under the request's processing: confined to six tokens by the request's
/// bias, its random weights agree with the model at times and not at others. Greedy output is
/// token for token plain decoding's, alone, wherever the reply ends.
#[test]
fn mtp_proposals_give_the_plain_greedy_reply_alone() {
    for name in WITH_MTP {
        let (engine, model) = load(tiny(name));
        let (mut kept, mut proposed) = (0, 0);
        for first in [20, 50, 90] {
            let mut request = Request::new(model, Prompt::Tokens(repeating(first, 9)), confined(first, 40));
            request.ignore_eos = true;
            request.chunk_size = 16;
            let u = same_with(&engine, &request, MTP).usage;
            eprintln!("{name} from {first}: mtp {} of {} accepted in {} passes", u.draft_accepted, u.draft_proposed, u.draft_steps);
            assert!(u.draft_steps > 0, "{name}: the head proposes");
            (kept, proposed) = (kept + u.draft_accepted, proposed + u.draft_proposed);
        }
        assert!(kept > 0 && proposed > kept, "{name}: proposals kept and rejected: {kept} of {proposed}");
        let mut request = Request::new(model, Prompt::Tokens(repeating(20, 9)), confined(20, 40));
        request.ignore_eos = true;
        for max_tokens in [1, 2, 7, 12] {
            request.sampling.max_tokens = max_tokens;
            same_with(&engine, &request, MTP);
        }
    }
}

/// Rows join at different steps: two drafting with the head (verifying together), then a plain
/// one and another with the head, so that the batch steps plainly for a while (the head's rows
/// then miss the model's hidden states there, and read on after). Each row gives its plain reply.
#[test]
fn mtp_rows_in_a_batch_give_their_plain_replies() {
    for name in WITH_MTP {
        let (engine, model) = load(tiny(name));
        let prompts = [repeating(20, 6), repeating(50, 11), repeating(90, 17), repeating(130, 5)];
        let max_tokens = [40u32, 34, 24, 28];
        let methods = [Some(MTP), Some(MTP), None, Some(MTP)];
        let request = |i: usize, speculative: Option<Speculative>| {
            let mut r = Request::new(model, Prompt::Tokens(prompts[i].clone()), confined(prompts[i][0], max_tokens[i]));
            r.ignore_eos = true;
            r.chunk_size = 16;
            r.reuse_prefix = false;
            r.speculative = speculative;
            r
        };
        let alone: Vec<Vec<u32>> = (0..4).map(|i| finished(engine.generate(request(i, None))).0).collect();
        for rows in [2, 4] {
            let mut events: Vec<Vec<Event>> = (0..rows).map(|_| vec![]).collect();
            let mut running: Vec<Generation> = vec![];
            for i in 0..rows {
                running.push(engine.generate(request(i, methods[i])));
                take_tokens(&running[i], 3, &mut events[i]);
            }
            let mut steps = 0;
            for (i, generation) in running.into_iter().enumerate() {
                let mut all = std::mem::take(&mut events[i]);
                all.extend(generation);
                let (ids, usage) = finished(all.into_iter());
                eprintln!(
                    "{name}, {rows} rows, row {i}: {} of {} accepted in {} passes",
                    usage.draft_accepted, usage.draft_proposed, usage.draft_steps
                );
                assert_eq!(ids, alone[i], "{name}: row {i} ({:?}) of {rows} differs from plain decoding alone", methods[i]);
                steps += usage.draft_steps;
            }
            assert!(steps > 0, "{name}: rows verified the head's proposals");
        }
    }
}

/// A reply drafted by the head leaves a state a follow-up resumes from as a cold run computes
/// it; the follow-up drafts with the head from the resumed position on.
#[test]
fn mtp_after_a_prefix_cache_resume_gives_the_cold_reply() {
    for name in WITH_MTP {
        let (engine, model) = load(tiny(name));
        let prompt = repeating(30, 9);
        let mut first = Request::new(model, Prompt::Tokens(prompt.clone()), confined(30, 20));
        first.ignore_eos = true;
        first.chunk_size = 16;
        first.speculative = Some(MTP);
        let reply = run(&engine, first.clone());
        assert!(reply.usage.draft_steps > 0, "{name}: the first reply verified proposals");
        let follow_up = Request { prompt: Prompt::Tokens([prompt.clone(), reply.ids.clone(), (30..36).collect()].concat()), ..first };
        let cached = run(&engine, follow_up.clone());
        assert!(cached.plan.reused_tokens > prompt.len(), "{name}: resumed {} of {}", cached.plan.reused_tokens, cached.plan.prompt_tokens);
        assert!(cached.usage.draft_steps > 0, "{name}: the resumed reply drafts with the head");
        let cold = run(&engine, Request { reuse_prefix: false, speculative: None, ..follow_up });
        assert_eq!(cached.ids, cold.ids, "{name}: a resumed state drafted by the head serves the follow-up as computing it afresh does");
    }
}

/// Without `mtp.*` weights the plan declines the head, saying so.
#[test]
fn the_plan_declines_mtp_for_a_model_without_the_head() {
    let (engine, model) = load(tiny("qwen3_5"));
    let plan = run(&engine, Request { speculative: Some(MTP), ..Request::new(model, Prompt::Tokens(repeating_ids()), greedy(4)) }).plan;
    assert_eq!(plan.speculative, None);
    let why = plan.speculative_declined.unwrap_or_default();
    assert!(why.contains("multi-token-prediction") && why.contains("mtp.*"), "{why}");
    let (engine, model) = load(tiny("qwen3_5_mtp"));
    let nothing =
        Request { speculative: Some(Speculative::Mtp { max_draft: 0 }), ..Request::new(model, Prompt::Tokens(repeating_ids()), greedy(4)) };
    assert!(run(&engine, nothing).plan.speculative_declined.unwrap_or_default().contains("proposes nothing"));
}

/// A reply under a JSON schema speculates: the grammar's forced tokens (keys, punctuation) are
/// fed as free drafts ahead of the proposals, and prompt lookup's proposals are checked under
/// the grammar's masks (one it does not allow is rejected like any other). Greedy output is token
/// for token the constrained reply without speculation, alone and in a batch with a free row,
/// and the stats count the grammar's drafts.
#[test]
fn a_json_schema_reply_speculates_with_the_grammars_forced_tokens() {
    let (engine, model) = load(smollm2());
    let schema = serde_json::json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "maxLength": 24},
            "city": {"type": "string", "maxLength": 24},
            "pets": {"type": "array", "items": {"enum": ["cat", "dog", "fish"]}, "minItems": 1, "maxItems": 3}
        },
        "required": ["name", "city", "pets"],
        "additionalProperties": false
    });
    let ask = "Repeat this JSON exactly: {\"name\": \"Ada Lovelace\", \"city\": \"London\", \"pets\": [\"cat\", \"dog\"]}";
    let constrained = |speculative: Option<Speculative>| {
        let mut r = Request::new(model, Prompt::Chat(vec![ChatMessage::user(ask)]), greedy(60));
        r.constraint = Some(confab_engine::constraint::Constraint::JsonSchema(schema.clone()));
        r.reuse_prefix = false;
        r.speculative = speculative;
        r
    };
    let plain = run(&engine, constrained(None));
    let fast = run(&engine, constrained(Some(LOOKUP)));
    assert_eq!(fast.plan.speculative, Some("prompt_lookup"), "declined: {:?}", fast.plan.speculative_declined);
    assert_eq!(fast.ids, plain.ids, "a constrained reply with speculation differs from one without: {:?} / {:?}", fast.text, plain.text);
    assert_eq!((fast.reason, &fast.text), (plain.reason, &plain.text));
    serde_json::from_str::<serde_json::Value>(&fast.text).unwrap_or_else(|e| panic!("{e}: {:?}", fast.text));
    let stats = fast.usage.speculative().expect("speculative stats");
    eprintln!("JSON schema: {stats:?}; {:?}", fast.text);
    assert!(stats.from_grammar > 0, "the grammar's forced tokens were fed as drafts: {stats:?}");
    assert!(stats.accepted > 0, "lookup's proposals were kept under the grammar: {stats:?}");

    // In a batch with a free row, joining after three tokens.
    let free = Request { reuse_prefix: false, ..quoting_request(model, 24) };
    let free_alone = finished(engine.generate(free.clone())).0;
    let mut events = vec![vec![], vec![]];
    let first = engine.generate(constrained(Some(LOOKUP)));
    take_tokens(&first, 3, &mut events[0]);
    let second = engine.generate(Request { speculative: Some(LOOKUP), ..free });
    let mut ids = vec![];
    for (generation, mut seen) in [first, second].into_iter().zip(events) {
        seen.extend(generation);
        ids.push(finished(seen.into_iter()).0);
    }
    assert_eq!(ids[0], plain.ids, "the constrained row in a batch");
    assert_eq!(ids[1], free_alone, "the free row in a batch");
}

/// The chi-square statistic's bound that a correct sampler exceeds with probability 1e-4, for
/// `df` degrees of freedom (Wilson–Hilferty's approximation of the quantile).
fn chi_square_bound(df: usize) -> f64 {
    const Z: f64 = 3.719; // the standard normal's 1 - 1e-4 quantile
    let k = df as f64;
    k * (1.0 - 2.0 / (9.0 * k) + Z * (2.0 / (9.0 * k)).sqrt()).powi(3)
}

/// The model's raw logits after `ids` (its first step's, as `logits_path` saves them).
fn raw_logits(engine: &Engine, model: ModelId, ids: Vec<u32>) -> Vec<f32> {
    let path = std::env::temp_dir().join(format!("confab-chi-square-{}-{}.npy", std::process::id(), ids.len()));
    let mut request = Request::new(model, Prompt::Tokens(ids), greedy(1));
    request.logits_path = Some(path.clone());
    request.reuse_prefix = false;
    run(engine, request);
    let logits = confab_engine::npy::read_f32(&path).unwrap();
    std::fs::remove_file(&path).ok();
    logits
}

/// Sampling with proposals draws each token from the model's own distribution, on every kind
/// of state that rolls back differently: keys and values (llama), rotating windows (gemma3, its
/// 8-position windows shorter than the prompt), Qwen3.5's recurrent and convolution state (with
/// the MTP head's sampled drafts too). At a fixed context (the prompt, then the reply's first
/// token, which the prefill samples; each value of it is its own context) the second token is
/// drawn 2,000 times with each method and plainly, and the counts are held to the model's
/// probabilities there (softmax of its logits over the six tokens an equal bias of 100 leaves, at
/// temperature 2.5) by a chi-square test: the statistic must stay under the bound a correct
/// sampler exceeds with probability 1e-4 (cells expected under 5 times pooled per context). The
/// prompt sets traps for prompt lookup, so that its first proposal is often kept and often not;
/// another model's drafts and the MTP head's are sampled (q < 1). A verifier that keeps every proposal the model could choose
/// (no min(1, p/q)) fails it (checked once with 1,000 draws: statistics of 2,100 to 6,800 against
/// bounds near 50, on gemma3 and qwen3_5 alike).
#[test]
fn sampled_tokens_follow_the_models_probabilities_by_chi_square() {
    const RUNS: u64 = 2000;
    const FIRST: u32 = 20;
    // Flattens the tiny models' distributions over the six tokens, so that each has its cells.
    const TEMPERATURE: f32 = 2.5;
    // Drafts of other models (sampled: q < 1 where p is not); gemma3's tiny fixtures have none
    // with other weights.
    let cases: [(&str, Option<&str>); 3] = [("llama", Some("lfm2")), ("gemma3", None), ("qwen3_5_mtp", Some("qwen2"))];
    for (name, other) in cases {
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let (model, _) = engine.load(tiny(name), LoadOptions::default(), |_| {}).unwrap();
        let prompt = trapped(FIRST, repeating(FIRST, 9));
        let sampling = SamplingParams {
            temperature: TEMPERATURE,
            logit_bias: (FIRST..FIRST + 6).map(|id| (id, 100.0)).collect(),
            // Room for a proposal at the second token (the third is the model's own after it).
            max_tokens: 3,
            ..SamplingParams::greedy()
        };
        // The model's probabilities of the second token after each first one.
        let allowed: Vec<u32> = (FIRST..FIRST + 6).collect();
        let probabilities: std::collections::HashMap<u32, Vec<f64>> = allowed
            .iter()
            .map(|&first| {
                let logits = raw_logits(&engine, model, [prompt.clone(), vec![first]].concat());
                let scaled = |t: u32| logits[t as usize] as f64 / TEMPERATURE as f64;
                let top = allowed.iter().map(|&t| scaled(t)).fold(f64::MIN, f64::max);
                let weights: Vec<f64> = allowed.iter().map(|&t| (scaled(t) - top).exp()).collect();
                let total: f64 = weights.iter().sum();
                (first, weights.iter().map(|w| w / total).collect())
            })
            .collect();
        let mut methods = vec![None, Some(LOOKUP)];
        if let Some(other) = other {
            let (draft, _) = engine.load(tiny(other), LoadOptions::default(), |_| {}).unwrap();
            methods.push(Some(Speculative::DraftModel { model: draft, max_draft: 3 }));
        }
        if name == "qwen3_5_mtp" {
            methods.push(Some(MTP));
        }
        let mut rejected = 0;
        for method in methods {
            let mut request = Request::new(model, Prompt::Tokens(prompt.clone()), sampling.clone());
            request.ignore_eos = true;
            request.speculative = method;
            let mut counts: std::collections::HashMap<(u32, u32), f64> = std::collections::HashMap::new();
            let (mut accepted, mut proposed) = (0, 0);
            for seed in 0..RUNS {
                request.sampling.seed = Some(seed);
                let out = run(&engine, request.clone());
                assert_eq!(out.ids.len(), 3);
                *counts.entry((out.ids[0], out.ids[1])).or_default() += 1.0;
                (accepted, proposed) = (accepted + out.usage.draft_accepted, proposed + out.usage.draft_proposed);
            }
            let (mut statistic, mut df) = (0.0, 0usize);
            for &first in &allowed {
                let n: f64 = allowed.iter().map(|&t| counts.get(&(first, t)).copied().unwrap_or(0.0)).sum();
                if n == 0.0 {
                    continue;
                }
                let (mut pooled_observed, mut pooled_expected, mut cells) = (0.0, 0.0, 0usize);
                for (k, &t) in allowed.iter().enumerate() {
                    let (observed, expected) = (counts.get(&(first, t)).copied().unwrap_or(0.0), n * probabilities[&first][k]);
                    if expected < 5.0 {
                        (pooled_observed, pooled_expected) = (pooled_observed + observed, pooled_expected + expected);
                        continue;
                    }
                    statistic += (observed - expected).powi(2) / expected;
                    cells += 1;
                }
                if pooled_expected > 0.0 {
                    statistic += (pooled_observed - pooled_expected).powi(2) / pooled_expected.max(1e-9);
                    cells += 1;
                }
                df += cells.saturating_sub(1);
            }
            let outside: f64 = counts.iter().filter(|((a, b), _)| !allowed.contains(a) || !allowed.contains(b)).map(|(_, c)| c).sum();
            assert_eq!(outside, 0.0, "{name}: tokens outside the biased six");
            let bound = chi_square_bound(df.max(1));
            eprintln!("{name} {method:?}: chi-square {statistic:.1} over {df} degrees of freedom (bound {bound:.1}); {accepted} of {proposed} accepted");
            if method.is_some() {
                // The model drafting for itself (q = p) keeps every proposal.
                assert!(accepted > 0, "{name} {method:?}: the accept path ran");
                rejected += proposed - accepted;
            }
            assert!(statistic <= bound, "{name} {method:?}: chi-square {statistic:.1} over {df} degrees of freedom exceeds {bound:.1}");
        }
        assert!(rejected > 0, "{name}: the reject path ran");
    }
}
