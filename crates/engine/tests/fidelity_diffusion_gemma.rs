//! DiffusionGemma (block diffusion on Gemma 4's MoE text stack) against transformers 5.25's
//! DiffusionGemmaForBlockDiffusion and its generate() (torch, eager, float32) on the tiny random
//! checkpoints made by tests/reference/make_diffusion_gemma.py: with the reference's noise
//! replayed (its random canvases and the uniforms its sampling drew), the denoising method
//! writes the same tokens with the same steps per canvas; the encoder's and the decoder's
//! first-step logits agree within 1e-4; also for a chat with an image (Gemma 4's vision tower
//! and processor, the image's tokens seeing each other both ways in every layer) and for a reply
//! that ends in the end-of-turn id. And the family's bad input: parameters out of range,
//! weights missing, requests the method cannot serve.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{copy_of_fixture, fixture, floats, ids, json, load_error, max_diff, reply};
use confab_engine::media::{decode_image, MediaItem, MediaLimits};
use confab_engine::model::families::gemma4::Gemma4Encoder;
use confab_engine::model::{self, Compute, EmbeddingsInput, Input, LoadOptions, MediaProcessor, Positions, Rows};
use confab_engine::runtime::{DenoisingNoise, Engine, EngineOptions, Event, Prompt, Request, Speculative, StopReason};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_engine::{Constraint, EngineError};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{ops, Array, Dtype};
use serde_json::Value;

/// float32 on both sides; what differs is summation order.
const LOGIT_TOLERANCE: f32 = 1e-4;
const FIXTURES: [&str; 2] = ["diffusion_gemma", "diffusion_gemma_b"];
/// The reference's end-of-turn ids (its generation_config.json's).
const EOS: [u32; 2] = [1, 4];

fn replayed(case: &Value) -> DenoisingNoise {
    let canvases = case["canvases"].as_array().unwrap().iter().map(ids).collect();
    let uniforms =
        case["uniforms"].as_array().unwrap().iter().map(|u| u.as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()).collect();
    DenoisingNoise::Replay { canvases, uniforms }
}

fn request(model: confab_engine::runtime::ModelId, case: &Value, max_tokens: u32) -> Request {
    let sampling = SamplingParams { max_tokens, ..SamplingParams::greedy() };
    let mut request = Request::new(model, Prompt::Tokens(ids(&case["prompt_ids"])), sampling);
    request.noise = Some(replayed(case));
    request.reuse_prefix = false;
    request
}

#[test]
fn replayed_noise_gives_transformers_tokens_and_steps() {
    for name in FIXTURES {
        let reference = json(&fixture(name).join("reference.json"));
        let engine = Engine::start(EngineOptions::default()).unwrap();
        let (model, info) = engine.load(fixture(name), LoadOptions::default(), |_| {}).unwrap();
        assert_eq!(info.architecture, "diffusion_gemma_text");
        let max_tokens = reference["generation"]["max_new_tokens"].as_u64().unwrap() as u32;
        for (i, case) in reference["cases"].as_array().unwrap().iter().enumerate() {
            let got = reply(&engine, request(model, case, max_tokens));
            let generated = ids(&case["generated_ids"]);
            // transformers pads what follows the end of turn; the reply ends there.
            let (want, reason) = match generated.iter().position(|t| EOS.contains(t)) {
                Some(end) => (generated[..end].to_vec(), StopReason::Eos),
                None => (generated.clone(), StopReason::MaxTokens),
            };
            assert_eq!(got.ids, want, "{name} case {i}: tokens");
            assert_eq!(got.reason, reason, "{name} case {i}: how it ended");
            assert_eq!(got.usage.steps_per_canvas, ids(&case["steps_per_canvas"]).iter().map(|&s| s as usize).collect::<Vec<_>>());
            assert_eq!(got.plan.method, "denoising");
            assert!(got.plan.batching_declined.as_deref().is_some_and(|w| w.contains("not batched")));
            eprintln!("{name} case {i}: {} tokens, steps per canvas {:?}", got.ids.len(), got.usage.steps_per_canvas);
        }
    }
}

/// The end-of-turn case: the reply stops at the id transformers ends the sequence with.
#[test]
fn a_reply_ending_in_the_end_of_turn_id_stops_there() {
    let reference = json(&fixture("diffusion_gemma").join("reference.json"));
    let ended: Vec<&Value> =
        reference["cases"].as_array().unwrap().iter().filter(|c| ids(&c["generated_ids"]).iter().any(|t| EOS.contains(t))).collect();
    assert!(!ended.is_empty(), "the fixture has a case ending in an end-of-turn id");
    // Its tokens, steps and end are checked with the others in
    // `replayed_noise_gives_transformers_tokens_and_steps`; here, that the reply is cut there
    // even with room left.
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("diffusion_gemma"), LoadOptions::default(), |_| {}).unwrap();
    for case in ended {
        let got = reply(&engine, request(model, case, 200));
        let generated = ids(&case["generated_ids"]);
        let end = generated.iter().position(|t| EOS.contains(t)).unwrap();
        assert_eq!((got.ids.as_slice(), got.reason), (&generated[..end], StopReason::Eos));
    }
}

const IMAGE_FIXTURE: &str = "diffusion_gemma_image";

/// The reference's chat (one user message: an image, then text) as the app sends it.
fn image_chat(case: &Value) -> Vec<ChatMessage> {
    let content = &case["chat"][0]["content"];
    let text = content.as_array().unwrap().iter().find(|c| c["type"] == "text").unwrap()["text"].as_str().unwrap();
    let image = fixture(IMAGE_FIXTURE).join(case["image"].as_str().unwrap());
    vec![ChatMessage::user(text).with_media([MediaItem::image(image)])]
}

#[test]
fn an_image_prompt_gives_transformers_tokens_and_steps() {
    let reference = json(&fixture(IMAGE_FIXTURE).join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(fixture(IMAGE_FIXTURE), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision && !info.audio && !info.video, "{info:?}");
    let max_tokens = reference["generation"]["max_new_tokens"].as_u64().unwrap() as u32;
    for (i, case) in reference["cases"].as_array().unwrap().iter().enumerate() {
        let mut request = request(model, case, max_tokens);
        request.prompt = Prompt::Chat(image_chat(case));
        let got = reply(&engine, request);
        assert_eq!(got.plan.prompt_tokens, ids(&case["prompt_ids"]).len(), "case {i}: the processor's prompt length");
        assert_eq!(got.plan.media.len(), 1);
        let generated = ids(&case["generated_ids"]);
        let end = generated.iter().position(|t| EOS.contains(t)).unwrap_or(generated.len());
        assert_eq!(got.ids, generated[..end], "case {i}: tokens");
        assert_eq!(got.usage.steps_per_canvas, ids(&case["steps_per_canvas"]).iter().map(|&s| s as usize).collect::<Vec<_>>());
        eprintln!("image case {i}: {} tokens, steps per canvas {:?}", got.ids.len(), got.usage.steps_per_canvas);
    }
}

/// The encoder over the prompt with the tower's rows spliced in (the image one block), then the
/// decoder's first step: both within tolerance of transformers'.
#[test]
fn an_image_prompts_first_step_logits_within_tolerance() {
    let dir = fixture(IMAGE_FIXTURE);
    let reference = json(&dir.join("reference.json"));
    let loaded = model::load(&dir, &LoadOptions::default()).unwrap();
    let m = loaded.model.as_ref();
    let towers = Gemma4Encoder::load_as(&dir, Dtype::Float32, "diffusion_gemma").unwrap().expect("a vision tower");
    let image_id = json(&dir.join("config.json"))["image_token_id"].as_u64().unwrap() as u32;
    for (i, case) in reference["cases"].as_array().unwrap().iter().enumerate() {
        let prompt = ids(&case["prompt_ids"]);
        let image = decode_image(&dir.join(case["image"].as_str().unwrap()), &MediaLimits::default()).unwrap();
        let rows = towers.embed_image(&image).unwrap();
        let start = prompt.iter().position(|&t| t == image_id).unwrap();
        let end = start + rows.dim(0) as usize;
        assert!(prompt[start..end].iter().all(|&t| t == image_id) && prompt[end] != image_id, "one run of image tokens");
        let as_i32: Vec<i32> = prompt.iter().map(|&t| t as i32).collect();
        let tokens = Array::from_slice(&as_i32, &[1, prompt.len() as i32]);
        let embeds = m.embed(&tokens).unwrap();
        let rows = rows.as_dtype(embeds.dtype()).unwrap().reshape(&[1, -1, embeds.dim(2)]).unwrap();
        let embeds = ops::concatenate(&[embeds.index((.., ..start as i32, ..)), rows, embeds.index((.., end as i32.., ..))], 1).unwrap();
        let blocks: Vec<i32> = (0..prompt.len()).map(|p| if (start..end).contains(&p) { 0 } else { -1 }).collect();
        let mut state = m.new_state();
        let input = EmbeddingsInput { embeds: &embeds, ids: &tokens, media_blocks: Some(&blocks), positions: None, layer_additions: None };
        let encoder =
            m.forward(Input::Embeddings(input), Rows::One(&mut state), Compute::Logits(Positions::Last)).unwrap().into_logits().unwrap();
        encoder.eval().unwrap();
        let diff = max_diff(encoder.as_slice::<f32>(), &floats(&case["encoder_last_logits"]));
        eprintln!("image case {i}: encoder last-position logits max abs diff {diff:e}");
        assert!(diff < LOGIT_TOLERANCE, "image case {i}: encoder logits differ by up to {diff}");

        let decoder = m.denoiser().unwrap().denoise(&ids(&case["canvases"][0]), None, &state).unwrap();
        decoder.eval().unwrap();
        let want: Vec<f32> = case["decoder_first_logits"].as_array().unwrap().iter().flat_map(floats).collect();
        let diff = max_diff(decoder.as_slice::<f32>(), &want);
        eprintln!("image case {i}: decoder first-step logits max abs diff {diff:e}");
        assert!(diff < LOGIT_TOLERANCE, "image case {i}: decoder logits differ by up to {diff}");
    }
}

/// The prefix cache's identity includes the image: the next turn of the chat reuses the prompt
/// with its image and the canvases; the same text with another image reuses nothing from the
/// image on. transformers' processor and model take several images, and so does Confab.
#[test]
fn the_image_is_part_of_the_reused_prefix_and_several_are_read() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture(IMAGE_FIXTURE), LoadOptions::default(), |_| {}).unwrap();
    let gradient = fixture("gemma4").join("media/gradient.png");
    let ask = |chat: Vec<ChatMessage>| {
        let sampling = SamplingParams { max_tokens: 12, seed: Some(5), ..SamplingParams::greedy() };
        reply(&engine, Request::new(model, Prompt::Chat(chat), sampling))
    };
    let first_turn = vec![ChatMessage::user("What is in the picture?").with_media([MediaItem::image(&gradient)])];
    let first = ask(first_turn.clone());
    let image = &first.plan.media[0];
    let image_end = image.position + image.soft_tokens;

    let mut second_turn = first_turn.clone();
    second_turn.extend([ChatMessage::assistant(first.text.clone()), ChatMessage::user("And the colours?")]);
    let second = ask(second_turn);
    assert!(second.plan.reused_tokens > image_end, "reused {} of a prompt whose image ends at {image_end}", second.plan.reused_tokens);

    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other.png");
    image::RgbImage::from_pixel(64, 48, image::Rgb([200, 30, 90])).save(&other).unwrap();
    let different = ask(vec![ChatMessage::user("What is in the picture?").with_media([MediaItem::image(&other)])]);
    assert!(
        different.plan.reused_tokens <= different.plan.media[0].position,
        "reused {} past the image at {}",
        different.plan.reused_tokens,
        different.plan.media[0].position
    );

    let both = ask(vec![ChatMessage::user("Compare them.").with_media([MediaItem::image(&gradient), MediaItem::image(&other)])]);
    assert_eq!(both.plan.media.len(), 2);
    assert!(!both.usage.steps_per_canvas.is_empty());
}

/// transformers' DiffusionGemma takes no video (nor audio): a video is refused before any
/// work, naming what the model reads.
#[test]
fn a_video_is_refused_saying_what_the_model_reads() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture(IMAGE_FIXTURE), LoadOptions::default(), |_| {}).unwrap();
    let chat = vec![ChatMessage::user("What happens?").with_media([MediaItem::video(fixture(IMAGE_FIXTURE).join("clip.mp4"))])];
    let request = Request::new(model, Prompt::Chat(chat), SamplingParams::greedy());
    let errors: Vec<String> = engine
        .generate(request)
        .filter_map(|e| match e {
            Event::Error(e) => Some(e.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("video") && errors[0].contains("image"), "{}", errors[0]);
}

#[test]
fn encoder_and_decoder_first_step_logits_within_tolerance() {
    for name in FIXTURES {
        let reference = json(&fixture(name).join("reference.json"));
        let loaded = model::load(&fixture(name), &LoadOptions::default()).unwrap();
        let denoiser = loaded.model.denoiser().expect("DiffusionGemma denoises");
        assert_eq!(denoiser.params().canvas_length, reference["canvas_length"].as_u64().unwrap() as usize);
        for (i, case) in reference["cases"].as_array().unwrap().iter().enumerate() {
            let prompt: Vec<i32> = ids(&case["prompt_ids"]).iter().map(|&t| t as i32).collect();
            let mut state = loaded.model.new_state();
            let encoder = loaded.model.logits(&Array::from_slice(&prompt, &[1, prompt.len() as i32]), &mut state).unwrap();
            encoder.eval().unwrap();
            let diff = max_diff(encoder.as_slice::<f32>(), &floats(&case["encoder_last_logits"]));
            eprintln!("{name} case {i}: encoder last-position logits max abs diff {diff:e}");
            assert!(diff < LOGIT_TOLERANCE, "{name} case {i}: encoder logits differ by up to {diff}");

            let first_canvas = ids(&case["canvases"][0]);
            let decoder = denoiser.denoise(&first_canvas, None, &state).unwrap();
            decoder.eval().unwrap();
            let want: Vec<f32> = case["decoder_first_logits"].as_array().unwrap().iter().flat_map(floats).collect();
            let diff = max_diff(decoder.as_slice::<f32>(), &want);
            eprintln!("{name} case {i}: decoder first-step logits max abs diff {diff:e}");
            assert!(diff < LOGIT_TOLERANCE, "{name} case {i}: decoder logits differ by up to {diff}");
            // The decoder only reads the state.
            assert_eq!(state.len(), prompt.len());
        }
    }
}

/// The same seed gives the same reply; the plan turns speculative decoding down with its reason.
#[test]
fn a_seeded_reply_repeats_and_the_plan_declines_speculation() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("diffusion_gemma"), LoadOptions::default(), |_| {}).unwrap();
    let run = || {
        let sampling = SamplingParams { max_tokens: 16, seed: Some(11), ..SamplingParams::greedy() };
        let mut request = Request::new(model, Prompt::Tokens(vec![2, 40, 41, 42, 43]), sampling);
        request.speculative = Some(Speculative::PromptLookup(Default::default()));
        reply(&engine, request)
    };
    let (a, b) = (run(), run());
    assert_eq!(a.ids, b.ids);
    assert!(!a.usage.steps_per_canvas.is_empty());
    assert_eq!(a.plan.speculative, None);
    assert!(a.plan.speculative_declined.as_deref().is_some_and(|w| w.contains("whole canvases")), "{:?}", a.plan.speculative_declined);
}

/// The encoder's state of a turn (prompt and canvases) is kept: the next turn reports the
/// reused prefix in its plan and writes what it writes computed cold.
#[test]
fn a_second_turn_reuses_the_encoder_state_and_writes_the_same() {
    let seeded = |model, prompt: Vec<u32>, reuse: bool| {
        let sampling = SamplingParams { max_tokens: 12, seed: Some(5), ..SamplingParams::greedy() };
        let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
        request.reuse_prefix = reuse;
        request
    };
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("diffusion_gemma_b"), LoadOptions::default(), |_| {}).unwrap();
    let first_prompt = vec![2, 50, 51, 52, 53, 54, 55];
    let first = reply(&engine, seeded(model, first_prompt.clone(), true));
    let second_prompt: Vec<u32> = first_prompt.iter().chain(&first.ids).chain(&[60, 61, 62]).copied().collect();
    let warm = reply(&engine, seeded(model, second_prompt.clone(), true));
    assert!(warm.plan.reused_tokens >= first_prompt.len(), "reused {} of {}", warm.plan.reused_tokens, second_prompt.len());

    let cold_engine = Engine::start(EngineOptions::default()).unwrap();
    let (cold_model, _) = cold_engine.load(fixture("diffusion_gemma_b"), LoadOptions::default(), |_| {}).unwrap();
    let cold = reply(&cold_engine, seeded(cold_model, second_prompt, false));
    assert_eq!(cold.plan.reused_tokens, 0);
    assert_eq!(warm.ids, cold.ids);
    assert_eq!(warm.usage.steps_per_canvas, cold.usage.steps_per_canvas);
}

#[test]
fn a_constraint_is_refused_saying_what_to_do() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("diffusion_gemma"), LoadOptions::default(), |_| {}).unwrap();
    let mut request = Request::new(model, Prompt::Tokens(vec![2, 40, 41]), SamplingParams::greedy());
    request.constraint = Some(Constraint::Regex("[a-z]+".into()));
    let errors: Vec<String> = engine
        .generate(request)
        .filter_map(|e| match e {
            Event::Error(e) => Some(e.to_string()),
            _ => None,
        })
        .collect();
    assert_eq!(errors.len(), 1, "{errors:?}");
    assert!(errors[0].contains("denoising whole canvases") && errors[0].contains("without one"), "{}", errors[0]);
}

fn edit_json(path: &Path, edit: impl Fn(&mut Value)) {
    let mut value: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut value);
    std::fs::write(path, value.to_string()).unwrap();
}

#[test]
fn a_step_count_out_of_range_is_refused_at_load() {
    for steps in [0, 5000] {
        let dir = copy_of_fixture("diffusion_gemma");
        edit_json(&dir.path().join("generation_config.json"), |g| g["max_denoising_steps"] = steps.into());
        let err = load_error(dir.path());
        assert!(matches!(err, EngineError::ModelFormat { .. }), "{err:?}");
        let message = err.to_string();
        assert!(
            message.contains("generation_config.json")
                && message.contains(&format!("`max_denoising_steps` {steps} is out of range"))
                && message.contains("set it between 1 and 1024"),
            "{message}"
        );
    }
}

#[test]
fn a_canvas_length_out_of_range_is_refused_at_load() {
    let dir = copy_of_fixture("diffusion_gemma");
    edit_json(&dir.path().join("config.json"), |c| c["canvas_length"] = 0.into());
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("`canvas_length` 0 is out of range; set it between 1 and 4096"), "{message}");
}

#[test]
fn missing_decoder_cross_attention_weights_are_named() {
    let dir = copy_of_fixture("diffusion_gemma");
    let file = dir.path().join("model.safetensors");
    let mut tensors: HashMap<String, Array> = Array::load_safetensors(&file).unwrap();
    tensors.remove("model.decoder.layers.1.self_attn.k_proj.weight").unwrap();
    std::fs::remove_file(&file).unwrap();
    Array::save_safetensors(tensors, None, &file).unwrap();
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    let message = err.to_string();
    assert!(
        message.contains("cross-attention")
            && message.contains("model.decoder.layers.1.self_attn.k_proj.weight")
            && message.contains("Download the model again"),
        "{message}"
    );
}

#[test]
fn missing_self_conditioning_weights_are_named() {
    let dir = copy_of_fixture("diffusion_gemma_b");
    let file = dir.path().join("model.safetensors");
    let mut tensors: HashMap<String, Array> = Array::load_safetensors(&file).unwrap();
    tensors.remove("model.decoder.self_conditioning.up_proj.weight").unwrap();
    std::fs::remove_file(&file).unwrap();
    Array::save_safetensors(tensors, None, &file).unwrap();
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("self_conditioning.up_proj.weight") && message.contains("missing"), "{message}");
}
