//! The sampler on real MLX arrays: greedy, penalties, bias, the filters, seeding, validation,
//! and reading a model's generation_config.json.

use std::collections::{HashMap, HashSet};

use confab_engine::sample::{Sampler, SamplingParams};
use confab_engine::EngineError;
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{Array, Dtype};

fn logits(values: &[f32]) -> Array {
    Array::from_slice(values, &[values.len() as i32])
}

fn sampler(params: SamplingParams, vocab: usize) -> Sampler {
    Sampler::new(params, vocab).expect("valid params")
}

/// A logits vector of `n` tokens with a clear winner and a noisy tail.
fn bumpy(n: usize, winner: usize) -> Vec<f32> {
    let mut v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1009) as f32) / 400.0 - 1.0).collect();
    v[winner] = 5.0;
    v
}

/// Draws `n` tokens and counts each.
fn counts(s: &mut Sampler, l: &Array, history: &[u32], n: usize) -> HashMap<u32, usize> {
    let mut c = HashMap::new();
    for _ in 0..n {
        *c.entry(s.sample(l, history).unwrap()).or_default() += 1;
    }
    c
}

#[test]
fn greedy_picks_the_argmax() {
    let v = bumpy(1000, 613);
    let mut s = sampler(SamplingParams::greedy(), v.len());
    assert_eq!(s.sample(&logits(&v), &[]).unwrap(), 613);
    // [1, vocab] works too, as do half-precision logits.
    let row = Array::from_slice(&v, &[1, v.len() as i32]);
    assert_eq!(s.sample(&row, &[]).unwrap(), 613);
    let half = logits(&v).as_dtype(Dtype::Bfloat16).unwrap();
    assert_eq!(s.sample(&half, &[]).unwrap(), 613);
}

#[test]
fn greedy_accepts_a_strided_row() {
    // The last position of [1, seq, vocab] logits, as a model hands it over.
    let (seq, vocab) = (3, 50);
    let mut all = vec![0f32; seq * vocab];
    all[2 * vocab + 17] = 9.0;
    all[vocab + 3] = 20.0; // the wrong row's maximum must not leak in
    let full = Array::from_slice(&all, &[1, seq as i32, vocab as i32]);
    let last = full.index((.., -1, ..));
    let mut g = sampler(SamplingParams::greedy(), vocab);
    assert_eq!(g.sample(&last, &[]).unwrap(), 17);
    let mut t = sampler(SamplingParams { top_k: 1, ..SamplingParams::default() }, vocab);
    assert_eq!(t.sample(&last, &[]).unwrap(), 17);
    // Stochastic path on a column (a strided, non-contiguous view): the winner dominates.
    let mut two = vec![-30f32; vocab * 2];
    two[42 * 2] = 0.0;
    two[7 * 2 + 1] = 50.0; // the other column's maximum must not leak in
    let col = Array::from_slice(&two, &[vocab as i32, 2]).index((.., 0));
    assert!(matches!(col.try_as_slice::<f32>(), Err(mlx_rs::error::AsSliceError::NotContiguous)));
    let mut s = sampler(SamplingParams { seed: Some(1), ..SamplingParams::default() }, vocab);
    assert_eq!(s.sample(&col, &[]).unwrap(), 42);
}

#[test]
fn near_zero_temperature_and_top_k_one_equal_greedy() {
    let v = bumpy(2000, 1234);
    let l = logits(&v);
    let mut greedy = sampler(SamplingParams::greedy(), v.len());
    let want = greedy.sample(&l, &[]).unwrap();
    let mut cold = sampler(SamplingParams { temperature: 1e-4, seed: Some(3), ..Default::default() }, v.len());
    let mut top1 = sampler(SamplingParams { top_k: 1, temperature: 5.0, ..Default::default() }, v.len());
    for _ in 0..50 {
        assert_eq!(cold.sample(&l, &[]).unwrap(), want);
        assert_eq!(top1.sample(&l, &[]).unwrap(), want);
    }
}

#[test]
fn top_k_keeps_the_k_best() {
    let v: Vec<f32> = (0..100).map(|i| i as f32 / 50.0).collect(); // best are 99, 98, 97
    let params = SamplingParams { top_k: 3, temperature: 3.0, seed: Some(11), ..Default::default() };
    let c = counts(&mut sampler(params, v.len()), &logits(&v), &[], 600);
    assert_eq!(c.keys().copied().collect::<HashSet<_>>(), HashSet::from([97, 98, 99]));
}

#[test]
fn top_p_never_leaves_the_nucleus() {
    // Probabilities 0.5, 0.3, 0.1, 0.05, 0.05: with p = 0.75 the nucleus is {0, 1}
    // (0.5 < 0.75 ≤ 0.8); with p = 0.85 it is {0, 1, 2}.
    let probs = [0.5f32, 0.3, 0.1, 0.05, 0.05];
    let v: Vec<f32> = probs.iter().map(|p| p.ln()).collect();
    let l = logits(&v);
    for (p, nucleus) in [(0.75f32, vec![0u32, 1]), (0.85, vec![0, 1, 2]), (0.3, vec![0])] {
        let params = SamplingParams { top_p: p, seed: Some(5), ..Default::default() };
        let c = counts(&mut sampler(params, v.len()), &l, &[], 2000);
        let got: HashSet<u32> = c.keys().copied().collect();
        assert_eq!(got, nucleus.iter().copied().collect(), "top_p {p}: {c:?}");
    }
    // A tiny p still keeps one token.
    let params = SamplingParams { top_p: 1e-6, seed: Some(5), ..Default::default() };
    assert_eq!(counts(&mut sampler(params, v.len()), &l, &[], 100).get(&0), Some(&100));
}

#[test]
fn top_p_applies_after_temperature() {
    // At temperature 1 token 0 holds 0.5 of the mass, so p = 0.6 keeps {0, 1}; at a low
    // temperature it holds > 0.6 alone.
    let v: Vec<f32> = [0.5f32, 0.3, 0.2].iter().map(|p| p.ln()).collect();
    let params = SamplingParams { top_p: 0.6, temperature: 0.25, seed: Some(9), ..Default::default() };
    let c = counts(&mut sampler(params, 3), &logits(&v), &[], 500);
    assert_eq!(c.get(&0), Some(&500), "{c:?}");
}

#[test]
fn min_p_excludes_unlikely_tokens() {
    // Relative to the best (0.4): min_p 0.3 keeps ≥ 0.12, i.e. tokens 0, 1, 2.
    let probs = [0.4f32, 0.3, 0.15, 0.1, 0.05];
    let v: Vec<f32> = probs.iter().map(|p| p.ln()).collect();
    let params = SamplingParams { min_p: 0.3, seed: Some(2), ..Default::default() };
    let c = counts(&mut sampler(params, v.len()), &logits(&v), &[], 2000);
    assert_eq!(c.keys().copied().collect::<HashSet<_>>(), HashSet::from([0, 1, 2]), "{c:?}");
}

#[test]
fn sampling_follows_the_distribution() {
    let probs = [0.7f32, 0.2, 0.1];
    let v: Vec<f32> = probs.iter().map(|p| p.ln()).collect();
    let n = 20_000;
    let params = SamplingParams { seed: Some(77), ..Default::default() };
    let c = counts(&mut sampler(params, 3), &logits(&v), &[], n);
    for (i, p) in probs.iter().enumerate() {
        let freq = *c.get(&(i as u32)).unwrap_or(&0) as f32 / n as f32;
        assert!((freq - p).abs() < 0.02, "token {i}: {freq} vs {p}");
    }
}

#[test]
fn repetition_penalty_turns_away_from_seen_tokens() {
    // Token 0 leads 2.0 to 1.8; divided by 1.3 it drops to ~1.54.
    let v = [2.0f32, 1.8, -1.0, -3.0];
    let l = logits(&v);
    let off = SamplingParams::greedy();
    assert_eq!(sampler(off, 4).sample(&l, &[0, 2]).unwrap(), 0);
    let on = SamplingParams { repetition_penalty: 1.3, ..SamplingParams::greedy() };
    assert_eq!(sampler(on.clone(), 4).sample(&l, &[0, 2]).unwrap(), 1);
    // Outside the window the penalty does not apply.
    let narrow = SamplingParams { repetition_context: 2, ..on.clone() };
    assert_eq!(sampler(narrow, 4).sample(&l, &[0, 3, 2]).unwrap(), 0);
    // Negative logits are multiplied: -1.0 * 2 = -2.0 falls below -1.5.
    let v = [-1.0f32, -1.5, -4.0];
    let on = SamplingParams { repetition_penalty: 2.0, ..SamplingParams::greedy() };
    assert_eq!(sampler(on, 3).sample(&logits(&v), &[0]).unwrap(), 1);
}

#[test]
fn penalties_apply_when_sampling_too() {
    // Token 0 would win almost surely; a presence penalty of 10 leaves token 1 nearly certain.
    let v = [5.0f32, 3.0, -5.0];
    let l = logits(&v);
    let params = SamplingParams { presence_penalty: 10.0, temperature: 0.5, seed: Some(4), ..Default::default() };
    let c = counts(&mut sampler(params, 3), &l, &[0, 0, 0], 200);
    assert_eq!(c.get(&1), Some(&200), "{c:?}");
    let params = SamplingParams { repetition_penalty: 10.0, temperature: 0.2, seed: Some(4), ..Default::default() };
    let c = counts(&mut sampler(params, 3), &l, &[0], 200);
    assert_eq!(c.get(&1), Some(&200), "{c:?}");
}

#[test]
fn presence_penalty_subtracts_from_seen_tokens() {
    let v = [1.0f32, 0.6, 0.0];
    let l = logits(&v);
    let on = SamplingParams { presence_penalty: 0.5, ..SamplingParams::greedy() };
    assert_eq!(sampler(on.clone(), 3).sample(&l, &[]).unwrap(), 0);
    assert_eq!(sampler(on, 3).sample(&l, &[0, 0, 0]).unwrap(), 1);
}

#[test]
fn logit_bias_bans_and_boosts() {
    let v = bumpy(500, 42);
    let l = logits(&v);
    let ban = SamplingParams { logit_bias: HashMap::from([(42, f32::NEG_INFINITY)]), ..SamplingParams::greedy() };
    let second = sampler(ban.clone(), 500).sample(&l, &[]).unwrap();
    assert_ne!(second, 42);
    // Sampling never picks a banned token: a high temperature spreads over many others.
    let hot = SamplingParams { temperature: 2.0, seed: Some(8), ..ban };
    let c = counts(&mut sampler(hot, 500), &l, &[], 2000);
    assert!(!c.contains_key(&42) && c.len() > 100, "{c:?}");
    // A positive bias lifts a poor token to the top.
    let boost = SamplingParams { logit_bias: HashMap::from([(7, 100.0)]), ..SamplingParams::greedy() };
    assert_eq!(sampler(boost, 500).sample(&l, &[]).unwrap(), 7);
}

#[test]
fn all_tokens_banned_at_sample_time_is_an_error_not_a_panic() {
    let v = [f32::NEG_INFINITY, f32::NAN, 0.0];
    let params = SamplingParams { logit_bias: HashMap::from([(2, f32::NEG_INFINITY)]), seed: Some(1), ..Default::default() };
    let err = sampler(params, 3).sample(&logits(&v), &[]).unwrap_err();
    assert!(err.to_string().contains("probability 0"), "{err}");
}

#[test]
fn wrong_logits_shape_is_an_error() {
    let mut s = sampler(SamplingParams::greedy(), 10);
    let err = s.sample(&logits(&[0.0; 9]), &[]).unwrap_err();
    assert!(err.to_string().contains("[10] or [1, 10]"), "{err}");
    let ints = Array::from_slice(&[1i32; 10], &[10]);
    assert!(s.sample(&ints, &[]).is_err());
    // Out-of-vocabulary history ids are ignored, not indexed.
    let mut p = sampler(SamplingParams { repetition_penalty: 2.0, ..SamplingParams::greedy() }, 10);
    assert!(p.sample(&logits(&[0.0; 10]), &[99, u32::MAX]).is_ok());
}

#[test]
fn same_seed_same_tokens_different_seed_different_tokens() {
    let flat = logits(&[0.0; 1000]);
    let run = |seed: u64| {
        let mut s = sampler(SamplingParams { seed: Some(seed), ..Default::default() }, 1000);
        (0..32).map(|_| s.sample(&flat, &[]).unwrap()).collect::<Vec<_>>()
    };
    assert_eq!(run(1), run(1));
    assert_ne!(run(1), run(2));
    // Unseeded samplers differ from each other.
    let unseeded = || {
        let mut s = sampler(SamplingParams::default(), 1000);
        (0..32).map(|_| s.sample(&flat, &[]).unwrap()).collect::<Vec<_>>()
    };
    assert_ne!(unseeded(), unseeded());
    // Reproducible with every filter on, too.
    let v = bumpy(3000, 5);
    let l = logits(&v);
    let busy = |seed| {
        let params = SamplingParams {
            temperature: 1.5,
            top_k: 200,
            top_p: 0.9,
            min_p: 0.01,
            repetition_penalty: 1.2,
            presence_penalty: 0.3,
            seed: Some(seed),
            ..Default::default()
        };
        let mut s = sampler(params, v.len());
        let mut history = vec![5u32, 6, 7];
        for _ in 0..20 {
            let t = s.sample(&l, &history).unwrap();
            history.push(t);
        }
        history
    };
    assert_eq!(busy(10), busy(10));
    assert_ne!(busy(10), busy(11));
}

fn invalid(params: SamplingParams, vocab: usize) -> (String, String) {
    match params.validate(vocab).unwrap_err() {
        EngineError::InvalidSetting { name, reason } => (name.to_string(), reason),
        other => panic!("expected InvalidSetting, got {other:?}"),
    }
}

#[test]
fn validate_rejects_each_invalid_value_with_a_clear_message() {
    let d = SamplingParams::default;
    assert!(d().validate(10).is_ok());
    assert!(SamplingParams::greedy().validate(10).is_ok());
    let cases: Vec<(SamplingParams, &str, &str)> = vec![
        (SamplingParams { temperature: -0.1, ..d() }, "temperature", "≥ 0"),
        (SamplingParams { temperature: f32::NAN, ..d() }, "temperature", "≥ 0"),
        (SamplingParams { temperature: f32::INFINITY, ..d() }, "temperature", "finite"),
        (SamplingParams { top_p: 0.0, ..d() }, "top_p", "(0, 1]"),
        (SamplingParams { top_p: 1.01, ..d() }, "top_p", "(0, 1]"),
        (SamplingParams { top_p: f32::NAN, ..d() }, "top_p", "(0, 1]"),
        (SamplingParams { min_p: 1.0, ..d() }, "min_p", "[0, 1)"),
        (SamplingParams { min_p: -0.01, ..d() }, "min_p", "[0, 1)"),
        (SamplingParams { top_k: -1, ..d() }, "top_k", "negative"),
        (SamplingParams { repetition_penalty: 0.0, ..d() }, "repetition_penalty", "> 0"),
        (SamplingParams { repetition_penalty: -1.2, ..d() }, "repetition_penalty", "> 0"),
        (SamplingParams { presence_penalty: f32::NAN, ..d() }, "presence_penalty", "finite"),
        (SamplingParams { max_tokens: 0, ..d() }, "max_tokens", "1 or more"),
        (SamplingParams { stop: vec![String::new()], ..d() }, "stop", "empty"),
        (SamplingParams { logit_bias: HashMap::from([(10, 1.0)]), ..d() }, "logit_bias", "0 to 9"),
        (SamplingParams { logit_bias: HashMap::from([(3, f32::NAN)]), ..d() }, "logit_bias", "-inf"),
        (SamplingParams { logit_bias: (0..10).map(|i| (i, f32::NEG_INFINITY)).collect(), ..d() }, "logit_bias", "every token"),
    ];
    for (params, name, hint) in cases {
        let (got_name, reason) = invalid(params.clone(), 10);
        assert_eq!(got_name, name, "{params:?}");
        assert!(reason.contains(hint), "{name}: `{reason}` should mention `{hint}`");
    }
    // Sampler::new validates too, and the message names the setting.
    let err = Sampler::new(SamplingParams { top_p: 2.0, ..d() }, 10).unwrap_err();
    assert_eq!(err.to_string(), "invalid setting `top_p`: 2 is out of range; use a value in (0, 1] (1 = off)");
    assert!(Sampler::new(d(), 0).is_err());
}

#[test]
fn params_round_trip_through_json_with_banned_tokens() {
    let params = SamplingParams {
        temperature: 0.7,
        top_k: 40,
        logit_bias: HashMap::from([(3, f32::NEG_INFINITY), (5, 2.5)]),
        seed: Some(42),
        stop: vec!["</s>".into()],
        ..Default::default()
    };
    let json = serde_json::to_string(&params).unwrap();
    assert!(json.contains(r#""3":"-inf""#), "{json}");
    let back: SamplingParams = serde_json::from_str(&json).unwrap();
    assert_eq!(back, params);
    // Missing fields take the defaults; null bans.
    let partial: SamplingParams = serde_json::from_str(r#"{"temperature": 0.2, "logit_bias": {"7": null, "8": -1}}"#).unwrap();
    assert_eq!(partial.temperature, 0.2);
    assert_eq!(partial.top_p, 1.0);
    assert_eq!(partial.repetition_context, 64);
    assert_eq!(partial.logit_bias, HashMap::from([(7, f32::NEG_INFINITY), (8, -1.0)]));
    assert!(serde_json::from_str::<SamplingParams>(r#"{"logit_bias": {"x": 1}}"#).is_err());
}

#[test]
fn from_generation_config_reads_hugging_face_defaults() {
    // As shipped with Qwen2.5-Instruct.
    let qwen = serde_json::json!({
        "bos_token_id": 151643,
        "pad_token_id": 151643,
        "do_sample": true,
        "eos_token_id": [151645, 151643],
        "repetition_penalty": 1.05,
        "temperature": 0.7,
        "top_p": 0.8,
        "top_k": 20,
        "transformers_version": "4.37.0"
    });
    let p = SamplingParams::from_generation_config(&qwen).unwrap();
    assert_eq!((p.temperature, p.top_p, p.top_k, p.repetition_penalty), (0.7, 0.8, 20, 1.05));
    assert_eq!(p.min_p, 0.0);
    assert!(p.validate(151936).is_ok());

    // do_sample: false means greedy whatever the temperature says.
    let greedy = serde_json::json!({"do_sample": false, "temperature": 0.6, "top_p": 0.9, "min_p": 0.05});
    let p = SamplingParams::from_generation_config(&greedy).unwrap();
    assert_eq!((p.temperature, p.top_p, p.min_p), (0.0, 0.9, 0.05));

    // Nothing about sampling (SmolLM2's file): the defaults.
    let bare = serde_json::json!({"bos_token_id": 1, "eos_token_id": 2, "pad_token_id": 2, "top_k": null});
    assert_eq!(SamplingParams::from_generation_config(&bare).unwrap(), SamplingParams::default());

    // Wrong types and ranges name the field.
    let bad = serde_json::json!({"temperature": "hot"});
    let err = SamplingParams::from_generation_config(&bad).unwrap_err();
    assert!(err.to_string().contains("`temperature`") && err.to_string().contains("expected a number"), "{err}");
    let bad = serde_json::json!({"top_p": 0});
    assert!(SamplingParams::from_generation_config(&bad).unwrap_err().to_string().contains("`top_p`"));
    let bad = serde_json::json!({"top_k": 2.5});
    assert!(SamplingParams::from_generation_config(&bad).unwrap_err().to_string().contains("whole number"));
    let bad = serde_json::json!({"do_sample": "yes"});
    assert!(SamplingParams::from_generation_config(&bad).unwrap_err().to_string().contains("`do_sample`"));
}

/// Bias, repetition and presence applied in plain Rust, then the first maximum.
fn reference_choice(v: &[f32], p: &SamplingParams, history: &[u32]) -> u32 {
    let mut v = v.to_vec();
    for (&id, &b) in &p.logit_bias {
        v[id as usize] += b;
    }
    let window: HashSet<u32> = history[history.len().saturating_sub(p.repetition_context)..].iter().copied().collect();
    for &id in &window {
        let x = v[id as usize];
        v[id as usize] = if x > 0.0 { x / p.repetition_penalty } else { x * p.repetition_penalty } - p.presence_penalty;
    }
    let max = v.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    v.iter().position(|&x| x == max).unwrap() as u32
}

#[test]
fn device_and_host_processors_agree_with_a_reference() {
    let n = 300usize;
    let v: Vec<f32> = (0..n).map(|i| ((i * 7919 % 1009) as f32) / 100.0 - 5.0).collect();
    let mut state = 12345u64;
    let mut next = move |m: usize| {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        ((state >> 33) as usize) % m
    };
    let l = logits(&v);
    for round in 0..40 {
        let history: Vec<u32> = (0..next(80)).map(|_| next(n) as u32).collect();
        let params = SamplingParams {
            repetition_penalty: [1.0, 1.1, 1.5, 0.8][round % 4],
            presence_penalty: [0.0, 0.5, 2.0][round % 3],
            repetition_context: 8 + next(64),
            logit_bias: (0..next(4)).map(|_| (next(n) as u32, next(7) as f32 - 3.0)).collect(),
            ..SamplingParams::greedy()
        };
        let want = reference_choice(&v, &params, &history);
        assert_eq!(sampler(params.clone(), n).sample(&l, &history).unwrap(), want, "greedy, round {round}");
        // The host path at a vanishing temperature makes the same choice.
        let cold = SamplingParams { temperature: 1e-30, seed: Some(round as u64), ..params };
        assert_eq!(sampler(cold, n).sample(&l, &history).unwrap(), want, "host, round {round}");
    }
}

#[test]
fn vanishing_temperatures_do_not_overflow() {
    let v = bumpy(100, 64);
    for t in [1e-20f32, 1e-38, 1e-44] {
        let params = SamplingParams { temperature: t, seed: Some(1), ..Default::default() };
        assert_eq!(sampler(params, 100).sample(&logits(&v), &[]).unwrap(), 64, "temperature {t}");
    }
}

#[test]
fn top_p_finds_a_large_nucleus_exactly() {
    // 1000 tokens, increasing with the id, the best only e times the worst: the nucleus for
    // p = 0.5 is the ~380 highest ids, more than the sampler's first guess (64).
    let n = 1000usize;
    let v: Vec<f32> = (0..n).map(|i| i as f32 * 1e-3).collect();
    let weights: Vec<f64> = v.iter().map(|&x| f64::from(x - v[n - 1]).exp()).collect();
    let total: f64 = weights.iter().sum();
    let mut cumulative = 0.0;
    let cutoff = (0..n).rev().find(|&i| {
        cumulative += weights[i];
        cumulative >= 0.5 * total
    });
    let cutoff = cutoff.unwrap() as u32;
    let params = SamplingParams { top_p: 0.5, seed: Some(21), ..Default::default() };
    assert!(n as u32 - cutoff > 256, "the nucleus should outgrow two guesses");
    let c = counts(&mut sampler(params, n), &logits(&v), &[], 20_000);
    let lowest = *c.keys().min().unwrap();
    assert_eq!(lowest, cutoff, "the nucleus starts at {cutoff}");
    assert_eq!(c.len(), n - cutoff as usize, "every token of the nucleus is drawn");
}
