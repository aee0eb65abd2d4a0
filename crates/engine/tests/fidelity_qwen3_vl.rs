//! Qwen3-VL against transformers 5.25 (float32, eager) on the tiny random checkpoint of
//! tests/reference/make_qwen3_vl.py (fixtures/tiny/qwen3_vl), the image path:
//! - the processor: two PNGs of different aspect ratios (one shrunk to the pixel budget, one
//!   with a side that rounds half to even) decode and preprocess to the reference's pixel
//!   values (within 1e-6: the same bytes through the same float steps) and grids, and the chat
//!   [user: image, image, text] gives its prompt ids and its multimodal RoPE positions (3 × T);
//! - the vision tower on the reference's own pixel values: the merger's rows and both
//!   deepstack features within 1e-4;
//! - through the engine (load, generate with two image attachments, prefill in chunks of 16):
//!   first-step logits within 1e-4 and the 16 greedy ids; again with the prefix cache off, so
//!   the tower outputs come from the encoder cache (no tower run, same logits and ids); and a
//!   second turn that reuses the first's cached prefix (images included) gives the ids and
//!   logits the same prompt gives cold, from memory and, after a restart, from the disk tier.
//!   (A prompt with images carries every chunk's positions, so a resumed one re-derives its
//!   rope delta; the delta kept with the state serves its decode steps and continuations
//!   without positions: `cache/disk.rs` tests that it survives the disk.)
//! - an image past the processor's 200:1 aspect ratio is a typed error naming the file;
//! - image requests decoded in one batch with a text-only one each give their own tokens (and
//!   the same with Qwen3.5 with vision, whose image rows and text row attend by different paths);
//! - Qwen3.5 with a vision tower and Qwen3-VL-MoE (below); a vision_config whose tower is named
//!   otherwise loads text-only.

mod common;

use common::{fixture, floats, ids, json, max_diff, reply, Reply};
use confab_engine::cache::PrefixOptions;
use confab_engine::media::{decode_image, MediaItem, MediaLimits};
use confab_engine::model::families::qwen3_vl::config::{ImageProcessorConfig, VisionConfig};
use confab_engine::model::families::qwen3_vl::processor::preprocess_image;
use confab_engine::model::families::qwen3_vl::Qwen3VlEncoder;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::media::prompt as media_prompt;
use confab_engine::runtime::{EncoderUse, Engine, EngineOptions, Event, ModelId, Plan, Prompt, ReadyModel, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::{ChatMessage, PromptEnd};
use mlx_rs::ops::indexing::IndexOp;
use mlx_rs::{Array, Dtype};
use serde_json::Value;

/// Pixel values: the same bytes (Pillow-exact resize) through the same float64 → float32
/// rescale and float32 normalisation; only a last-bit difference could show.
const PIXEL_TOLERANCE: f32 = 1e-6;
/// float32 on both sides; what differs is summation order (towers: |x| up to about 10).
const TOWER_TOLERANCE: f32 = 1e-4;
const LOGIT_TOLERANCE: f32 = 1e-4;

fn dir_of(name: &str) -> std::path::PathBuf {
    fixture(name)
}

fn dir() -> std::path::PathBuf {
    dir_of("qwen3_vl")
}

fn reference() -> Value {
    reference_of("qwen3_vl")
}

fn reference_of(name: &str) -> Value {
    json(&dir_of(name).join("reference.json"))
}

/// The reference's chat, with its images from the fixture named in `reference["name"]`.
fn messages(reference: &Value) -> Vec<ChatMessage> {
    let folder = dir_of(reference["name"].as_str().unwrap());
    let question = reference["messages"][0]["content"][2]["text"].as_str().unwrap();
    let images = reference["images"].as_array().unwrap().iter().map(|p| MediaItem::image(folder.join(p.as_str().unwrap())));
    vec![ChatMessage::user(question).with_media(images)]
}

fn npy_of(name: &str, file: &str) -> Array {
    Array::load_numpy(dir_of(name).join(file)).unwrap()
}

fn npy(file: &str) -> Array {
    npy_of("qwen3_vl", file)
}

fn to_vec(a: &Array) -> Vec<f32> {
    a.as_dtype(Dtype::Float32).unwrap().as_slice::<f32>().to_vec()
}

#[test]
fn processor_gives_the_reference_pixels_grids_prompt_and_positions() {
    let reference = reference();
    let path = dir().join("config.json");
    let config: Value = json(&path);
    let vision = VisionConfig::from_json(&config, &path).unwrap().unwrap();
    let settings = ImageProcessorConfig::from_folder(&dir()).unwrap().resolve(&vision, &path).unwrap();

    let mut pixels = Vec::new();
    let mut grids = Vec::new();
    for file in reference["images"].as_array().unwrap() {
        let image = decode_image(&dir().join(file.as_str().unwrap()), &MediaLimits::default()).unwrap();
        let patches = preprocess_image(&image, &settings).unwrap();
        grids.push(patches.grid.iter().map(|&g| g as u64).collect::<Vec<_>>());
        pixels.extend(patches.values);
    }
    let want: Vec<Vec<u64>> = serde_json::from_value(reference["image_grid_thw"].clone()).unwrap();
    assert_eq!(grids, want, "image grids");
    let diff = max_diff(&pixels, &to_vec(&npy("pixel_values.npy")));
    eprintln!("qwen3_vl pixel values: max abs diff {diff:e}");
    assert!(diff <= PIXEL_TOLERANCE, "pixel values differ by up to {diff}");

    let model = ReadyModel::load(&dir(), &LoadOptions::default(), &mut |_| {}).unwrap();
    assert!(model.info.vision && !model.info.audio);
    let prompt =
        media_prompt::build(&model, &messages(&reference), PromptEnd::NewReply, &Default::default(), &MediaLimits::default()).unwrap();
    assert_eq!(prompt.ids, ids(&reference["input_ids"]), "prompt ids");
    let spans: Vec<usize> = prompt.items.iter().map(|i| i.span.len).collect();
    assert_eq!(spans, ids(&reference["image_tokens"]).iter().map(|&n| n as usize).collect::<Vec<_>>(), "soft tokens per image");
    let positions = prompt.positions.expect("multimodal RoPE positions");
    let want: Vec<Vec<i32>> = serde_json::from_value(reference["position_ids"].clone()).unwrap();
    assert_eq!(positions.axes, 3);
    assert_eq!(positions.values, want.concat(), "position ids (time, height, width)");
    let furthest = *positions.values.iter().max().unwrap() as i64;
    assert_eq!(furthest + 1 - prompt.ids.len() as i64, reference["rope_delta"].as_i64().unwrap(), "rope delta");
}

#[test]
fn vision_tower_gives_the_reference_rows_and_deepstack_features() {
    let reference = reference();
    let encoder = Qwen3VlEncoder::load(&dir(), Dtype::Float32).unwrap().expect("a vision tower");
    let pixels = npy("pixel_values.npy");
    let patch_dim = pixels.dim(1) as usize;
    let grids: Vec<[usize; 3]> = serde_json::from_value(reference["image_grid_thw"].clone()).unwrap();
    let (mut start, mut outputs) = (0i32, Vec::new());
    for grid in &grids {
        let n = grid.iter().product::<usize>() as i32;
        let patches = to_vec(&pixels.index(start..start + n));
        outputs.push(encoder.encode(&patches, *grid, patch_dim).unwrap());
        start += n;
    }
    let files = &reference["files"];
    let streams = ["image_embeds".to_string(), "deepstack_0".into(), "deepstack_1".into()];
    for (k, name) in streams.iter().enumerate() {
        let got: Vec<f32> = outputs.iter().flat_map(|o| to_vec(&o.index(k as i32))).collect();
        let want = to_vec(&npy(files[name.as_str()].as_str().unwrap()));
        let diff = max_diff(&got, &want);
        eprintln!("qwen3_vl tower {name}: max abs diff {diff:e}");
        assert!(diff < TOWER_TOLERANCE, "{name} differs by up to {diff}");
    }
}

struct Outcome {
    plan: Plan,
    ids: Vec<u32>,
    text: String,
    first_logits: Vec<f32>,
}

fn ask(engine: &Engine, model: ModelId, messages: Vec<ChatMessage>, steps: u32) -> Outcome {
    let logits_file = tempfile::NamedTempFile::new().unwrap();
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = steps;
    let mut request = Request::new(model, Prompt::Chat(messages), sampling);
    request.ignore_eos = true;
    request.chunk_size = 16;
    request.logits_path = Some(logits_file.path().to_path_buf());
    let Reply { plan, ids, text, .. } = reply(engine, request);
    let first_logits = confab_engine::npy::read_f32(logits_file.path()).unwrap();
    Outcome { plan, ids, text, first_logits }
}

fn sources(plan: &Plan) -> Vec<EncoderUse> {
    plan.media.iter().map(|m| m.encoder).collect()
}

fn check(out: &Outcome, reference: &Value, tag: &str) {
    let diff = max_diff(&out.first_logits, &floats(&reference["first_logits"]));
    eprintln!("qwen3_vl {tag}: first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "{tag}: first-step logits differ by up to {diff}");
    assert_eq!(out.ids, ids(&reference["greedy_ids"]), "{tag}: greedy ids");
}

#[test]
fn two_images_through_the_engine_give_the_reference_logits_and_tokens_then_the_encoder_cache_serves_them() {
    let reference = reference();
    let steps = reference["steps"].as_u64().unwrap() as u32;
    // The prefix cache off: a repeated prompt must take its tower outputs from the encoder cache.
    let engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (model, info) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision, "the tiny Qwen3-VL reads images");

    let first = ask(&engine, model, messages(&reference), steps);
    assert_eq!(first.plan.prompt_tokens, reference["input_ids"].as_array().unwrap().len());
    assert_eq!(sources(&first.plan), [EncoderUse::Miss, EncoderUse::Miss]);
    assert_eq!(first.plan.tower_runs, 2);
    check(&first, &reference, "two images (towers run)");

    let again = ask(&engine, model, messages(&reference), steps);
    assert_eq!(sources(&again.plan), [EncoderUse::Memory, EncoderUse::Memory]);
    assert_eq!(again.plan.tower_runs, 0, "the encoder cache serves both images");
    check(&again, &reference, "two images (encoder cache hit)");
}

#[test]
fn a_second_turn_resumes_past_the_images_with_their_rope_delta() {
    let reference = reference();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let first = ask(&engine, model, messages(&reference), 8);
    let mut turn = messages(&reference);
    turn.push(ChatMessage::assistant(first.text.clone()));
    turn.push(ChatMessage::user("And the colours?"));
    let second = ask(&engine, model, turn.clone(), 8);
    let images_end = first.plan.media[1].position + first.plan.media[1].soft_tokens;
    assert!(second.plan.reused_tokens >= images_end, "reused {} tokens, the images end at {images_end}", second.plan.reused_tokens);
    assert_eq!(sources(&second.plan), [EncoderUse::Prefix, EncoderUse::Prefix]);

    // The same conversation cold: a fresh engine, nothing cached.
    let cold_engine = Engine::start(EngineOptions::default()).unwrap();
    let (cold_model, _) = cold_engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let cold = ask(&cold_engine, cold_model, turn, 8);
    assert_eq!(cold.plan.reused_tokens, 0);
    assert_eq!(second.ids, cold.ids, "resumed and cold second turns");
    let diff = max_diff(&second.first_logits, &cold.first_logits);
    eprintln!("qwen3_vl second turn: resumed vs cold first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "resumed second turn differs from cold by up to {diff}");
}

#[test]
fn after_a_restart_the_prefix_cache_disk_tier_resumes_past_the_images() {
    let reference = reference();
    let cache = tempfile::tempdir().unwrap();
    let options =
        || EngineOptions { prefix: PrefixOptions { dir: Some(cache.path().to_path_buf()), ..Default::default() }, ..Default::default() };
    let mut turn = messages(&reference);
    {
        let engine = Engine::start(options()).unwrap();
        let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
        let first = ask(&engine, model, messages(&reference), 8);
        turn.push(ChatMessage::assistant(first.text));
        turn.push(ChatMessage::user("And the colours?"));
        // Dropping the engine writes its cached conversations to disk.
    }
    let engine = Engine::start(options()).unwrap();
    let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let resumed = ask(&engine, model, turn.clone(), 8);
    assert_eq!(resumed.plan.reuse_source, "disk", "the restarted engine reads the first turn from disk");
    assert_eq!(sources(&resumed.plan), [EncoderUse::Prefix, EncoderUse::Prefix]);

    let cold_engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (cold_model, _) = cold_engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let cold = ask(&cold_engine, cold_model, turn, 8);
    assert_eq!(resumed.ids, cold.ids, "resumed from disk and cold second turns");
    let diff = max_diff(&resumed.first_logits, &cold.first_logits);
    eprintln!("qwen3_vl second turn from disk: resumed vs cold first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "resumed-from-disk second turn differs from cold by up to {diff}");
}

#[test]
fn an_image_past_the_processors_aspect_ratio_is_a_typed_error_and_the_model_still_answers() {
    let reference = reference();
    let folder = tempfile::tempdir().unwrap();
    let sliver = folder.path().join("sliver.png");
    confab_engine::media::RgbImage::from_pixel(402, 2, image::Rgb([200, 10, 10])).save(&sliver).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 4;
    let request =
        Request::new(model, Prompt::Chat(vec![ChatMessage::user("What is this?").with_media([MediaItem::image(&sliver)])]), sampling);
    let error = engine.generate(request).find_map(|e| match e {
        Event::Error(e) => Some(e),
        _ => None,
    });
    match error {
        Some(confab_engine::EngineError::Media { file, problem: confab_engine::MediaProblem::Unsuitable { detail } }) => {
            assert_eq!(file, "sliver.png");
            assert!(detail.contains("200:1"), "{detail}");
        }
        other => panic!("expected an unsuitable-image error naming the file, got {other:?}"),
    }
    let after = ask(&engine, model, messages(&reference), reference["steps"].as_u64().unwrap() as u32);
    check(&after, &reference, "two images after a refused one");
}

// ---- Qwen3.5 with a vision tower (fixtures/tiny/qwen3_5_vl, make_qwen3_5_vl.py): the same
// tower without deepstack, on the hybrid text model (multimodal RoPE on the attention layers'
// rotated channels, recurrent linear-attention layers resumed from checkpoints). ----

#[test]
fn qwen3_5_with_vision_gives_the_reference_prompt_tower_rows_logits_and_tokens() {
    let name = "qwen3_5_vl";
    let reference = reference_of(name);
    let folder = dir_of(name);

    let model = ReadyModel::load(&folder, &LoadOptions::default(), &mut |_| {}).unwrap();
    assert!(model.info.vision, "the tiny Qwen3.5 reads images");
    let prompt =
        media_prompt::build(&model, &messages(&reference), PromptEnd::NewReply, &Default::default(), &MediaLimits::default()).unwrap();
    assert_eq!(prompt.ids, ids(&reference["input_ids"]), "qwen3_5_vl prompt ids");
    let want: Vec<Vec<i32>> = serde_json::from_value(reference["position_ids"].clone()).unwrap();
    assert_eq!(prompt.positions.expect("positions").values, want.concat(), "qwen3_5_vl position ids");

    let encoder = Qwen3VlEncoder::load(&folder, Dtype::Float32).unwrap().expect("a vision tower");
    let pixels = npy_of(name, "pixel_values.npy");
    let grids: Vec<[usize; 3]> = serde_json::from_value(reference["image_grid_thw"].clone()).unwrap();
    let (mut start, mut rows) = (0i32, Vec::new());
    for grid in &grids {
        let n = grid.iter().product::<usize>() as i32;
        let out = encoder.encode(&to_vec(&pixels.index(start..start + n)), *grid, pixels.dim(1) as usize).unwrap();
        assert_eq!(out.dim(0), 1, "Qwen3.5's tower has no deepstack rows");
        rows.extend(to_vec(&out.index(0)));
        start += n;
    }
    let diff = max_diff(&rows, &to_vec(&npy_of(name, "image_embeds.npy")));
    eprintln!("qwen3_5_vl tower rows: max abs diff {diff:e}");
    assert!(diff < TOWER_TOLERANCE, "qwen3_5_vl tower rows differ by up to {diff}");

    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (id, _) = engine.load(&folder, LoadOptions::default(), |_| {}).unwrap();
    let first = ask(&engine, id, messages(&reference), steps);
    assert_eq!(first.plan.tower_runs, 2);
    check(&first, &reference, "qwen3_5_vl two images (towers run)");
    let again = ask(&engine, id, messages(&reference), steps);
    assert_eq!((sources(&again.plan), again.plan.tower_runs), (vec![EncoderUse::Memory, EncoderUse::Memory], 0));
    check(&again, &reference, "qwen3_5_vl two images (encoder cache hit)");
}

#[test]
fn qwen3_5_with_vision_resumes_a_second_turn_past_the_images_from_a_checkpoint() {
    let name = "qwen3_5_vl";
    let reference = reference_of(name);
    let folder = dir_of(name);
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(&folder, LoadOptions::default(), |_| {}).unwrap();
    let first = ask(&engine, id, messages(&reference), 8);
    let mut turn = messages(&reference);
    turn.push(ChatMessage::assistant(first.text.clone()));
    turn.push(ChatMessage::user("And the colours?"));
    let second = ask(&engine, id, turn.clone(), 8);
    let images_end = first.plan.media[1].position + first.plan.media[1].soft_tokens;
    assert!(second.plan.reused_tokens >= images_end, "reused {} tokens, the images end at {images_end}", second.plan.reused_tokens);

    let cold_engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (cold_id, _) = cold_engine.load(&folder, LoadOptions::default(), |_| {}).unwrap();
    let cold = ask(&cold_engine, cold_id, turn, 8);
    assert_eq!(second.ids, cold.ids, "qwen3_5_vl resumed and cold second turns");
    let diff = max_diff(&second.first_logits, &cold.first_logits);
    eprintln!("qwen3_5_vl second turn: resumed vs cold first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "qwen3_5_vl resumed second turn differs from cold by up to {diff}");
}

// ---- Qwen3-VL-MoE (fixtures/tiny/qwen3_vl_moe, make_qwen3_vl_moe.py): the same tower and
// processor, routed experts in every text layer, stored fused in the released layout. ----

#[test]
fn qwen3_vl_moe_gives_the_reference_logits_and_tokens() {
    let name = "qwen3_vl_moe";
    let reference = reference_of(name);
    let folder = dir_of(name);
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, info) = engine.load(&folder, LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision);
    let out = ask(&engine, id, messages(&reference), steps);
    assert_eq!(out.plan.prompt_tokens, reference["input_ids"].as_array().unwrap().len());
    check(&out, &reference, "qwen3_vl_moe two images");
}

#[test]
fn a_vision_config_whose_tower_is_named_otherwise_loads_as_text_only() {
    // mlx-vlm's conversions call the tower `vision_tower.*` (channels-last), which is not read
    // yet: the model must still load, without vision, as it did before towers were read.
    for name in ["qwen3_5_vl", "qwen3_vl"] {
        let folder = tempfile::tempdir().unwrap();
        for entry in std::fs::read_dir(dir_of(name)).unwrap() {
            let path = entry.unwrap().path();
            if path.is_file() && path.file_name().unwrap() != "model.safetensors" {
                std::fs::copy(&path, folder.path().join(path.file_name().unwrap())).unwrap();
            }
        }
        let tensors = Array::load_safetensors(dir_of(name).join("model.safetensors")).unwrap();
        let renamed: Vec<(String, Array)> = tensors.into_iter().map(|(k, v)| (k.replace("model.visual.", "vision_tower."), v)).collect();
        Array::save_safetensors(renamed.iter().map(|(k, v)| (k.as_str(), v)), None, folder.path().join("model.safetensors")).unwrap();
        let model = ReadyModel::load(folder.path(), &LoadOptions::default(), &mut |_| {}).unwrap();
        assert!(!model.info.vision, "{name}: no tower read, no vision");
    }
}

#[test]
fn image_requests_decoded_together_each_give_their_own_tokens() {
    decoded_together("qwen3_vl");
}

/// Qwen3.5's rows after images sit past their indices, so their attention layers take the
/// per-row path while the text-only row beside them takes the CPU decode kernels, as alone.
#[test]
fn qwen3_5_image_requests_decoded_together_each_give_their_own_tokens() {
    decoded_together("qwen3_5_vl");
}

/// Three requests at once (the prefix cache off, so each computes its prompt): the two-image
/// chat twice, the second joining after the first's third token, and a text-only chat.
/// Batched decode steps place each row at its own position (images shift them).
fn decoded_together(name: &str) {
    let reference = reference_of(name);
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (model, _) = engine.load(dir_of(name), LoadOptions::default(), |_| {}).unwrap();
    let request = |messages: Vec<ChatMessage>| {
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = steps;
        let mut r = Request::new(model, Prompt::Chat(messages), sampling);
        r.ignore_eos = true;
        r.chunk_size = 16;
        r
    };
    let text_only = || vec![ChatMessage::user("Describe a sunset over the sea in a few words.")];
    let text_alone = ask(&engine, model, text_only(), steps).ids;
    let tokens = |events: Vec<Event>| -> Vec<u32> {
        events
            .into_iter()
            .filter_map(|e| match e {
                Event::Token { id, .. } => Some(id),
                Event::Error(e) => panic!("{e}"),
                _ => None,
            })
            .collect()
    };
    let first = engine.generate(request(messages(&reference)));
    let mut first_events = Vec::new();
    while first_events.iter().filter(|e| matches!(e, Event::Token { .. })).count() < 3 {
        first_events.push(first.next().expect("still running"));
    }
    let second = engine.generate(request(messages(&reference)));
    let third = engine.generate(request(text_only()));
    first_events.extend(first);
    assert_eq!(tokens(first_events), ids(&reference["greedy_ids"]), "{name}: the first image request");
    assert_eq!(tokens(second.collect()), ids(&reference["greedy_ids"]), "{name}: the second image request, joined mid-way");
    assert_eq!(tokens(third.collect()), text_alone, "{name}: the text-only request beside them");
}

// ---- Video (reference["video"]: 10 frames of 72 × 40 at 10 fps, given to transformers as
// decoded frames with their metadata, in three chats: a video, an image and a video, the video
// twice). The engine reads the same frames through a
// `VideoReader` that serves media/video_frames.npy for media/moving.gif (the GIF holds the same
// frames), so decoding is out of the comparison; the GIF through the engine's own decoder is
// the ignored test at the end. ----

/// Serves the fixture's frames (uint8 [frames, height, width, 3]) for any path, as a decoder
/// that read the GIF would.
#[derive(Debug)]
struct FixtureFrames {
    frames: Vec<confab_engine::media::RgbImage>,
    fps: f64,
}

impl FixtureFrames {
    fn of(name: &str) -> std::sync::Arc<Self> {
        let reference = reference_of(name);
        let video = &reference["video"];
        let array = npy_of(name, video["frames_file"].as_str().unwrap());
        let [t, h, w, _] = array.shape()[..] else { panic!("frames are [t, h, w, 3]") };
        let bytes: Vec<u8> = array.as_slice::<u8>().to_vec();
        let per = (h * w * 3) as usize;
        let frames = (0..t as usize)
            .map(|i| confab_engine::media::RgbImage::from_raw(w as u32, h as u32, bytes[i * per..(i + 1) * per].to_vec()).unwrap())
            .collect();
        std::sync::Arc::new(Self { frames, fps: video["fps"].as_f64().unwrap() })
    }

    fn info(&self) -> confab_engine::media::VideoInfo {
        let (w, h) = self.frames[0].dimensions();
        let n = self.frames.len() as u64;
        confab_engine::media::VideoInfo {
            codec: "GIF".into(),
            mime: "image/gif",
            width: w,
            height: h,
            frames: n,
            fps: self.fps,
            seconds: n as f64 / self.fps,
            rotation: 0,
        }
    }
}

impl confab_engine::media::VideoReader for FixtureFrames {
    fn probe(
        &self,
        _source: &confab_engine::media::MediaSource,
        _limits: &MediaLimits,
    ) -> confab_engine::media::error::Result<confab_engine::media::VideoInfo> {
        Ok(self.info())
    }

    fn decode(
        &self,
        _source: &confab_engine::media::MediaSource,
        indices: &[u64],
        _limits: &MediaLimits,
    ) -> confab_engine::media::error::Result<confab_engine::media::Video> {
        Ok(confab_engine::media::Video {
            info: self.info(),
            frames: indices.iter().map(|&i| self.frames[i as usize].clone()).collect(),
            timestamps: indices.iter().map(|&i| i as f64 / self.fps).collect(),
        })
    }
}

/// A video chat of the reference (`key`: "video", "mixed" or "two_videos"), with each video as
/// the fixture's GIF.
fn video_messages(name: &str, key: &str) -> Vec<ChatMessage> {
    let folder = dir_of(name);
    let reference = reference_of(name);
    let chat = &reference["video"][key];
    let parts = chat["messages"][0]["content"].as_array().unwrap();
    let question = parts.iter().find(|p| p["type"] == "text").unwrap()["text"].as_str().unwrap();
    let gif = folder.join(reference["video"]["gif"].as_str().unwrap());
    let media = parts.iter().filter_map(|p| match p["type"].as_str().unwrap() {
        "image" => Some(MediaItem::image(folder.join(chat["images"][0].as_str().unwrap()))),
        "video" => Some(MediaItem::video(&gif)),
        _ => None,
    });
    vec![ChatMessage::user(question).with_media(media.collect::<Vec<_>>())]
}

fn video_engine(name: &str, options: EngineOptions) -> (Engine, ModelId) {
    let engine = Engine::start(EngineOptions { video_reader: Some(FixtureFrames::of(name)), ..options }).unwrap();
    let (model, info) = engine.load(dir_of(name), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision && info.video, "{name} reads images and videos");
    (engine, model)
}

fn no_prefix_cache() -> EngineOptions {
    EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }
}

#[test]
fn video_processor_gives_the_reference_frames_pixels_grid_prompt_ids_and_positions() {
    use confab_engine::model::families::qwen3_vl::config::VideoProcessorConfig;
    use confab_engine::model::families::qwen3_vl::video::{layout, preprocess_video};
    for name in ["qwen3_vl", "qwen3_5_vl"] {
        let reference = reference_of(name);
        let video = &reference["video"];
        let path = dir_of(name).join("config.json");
        let vision = VisionConfig::from_json(&json(&path), &path).unwrap().unwrap();
        let (config, file) = VideoProcessorConfig::from_folder(&dir_of(name)).unwrap();
        assert!(file.ends_with("video_preprocessor_config.json"));
        let settings = config.resolve(&vision, &file).unwrap();
        let frames = FixtureFrames::of(name);
        let laid = layout(&frames.info(), &settings).unwrap();
        assert_eq!(
            laid.frames,
            ids(&video["video"]["video_frames"]).iter().map(|&i| i as u64).collect::<Vec<_>>(),
            "{name}: sampled frames"
        );
        let grid: Vec<[usize; 3]> = serde_json::from_value(video["video"]["video_grid_thw"].clone()).unwrap();
        assert_eq!(laid.grid, grid[0], "{name}: video grid");
        assert_eq!(laid.soft_tokens(), video["video"]["video_tokens"].as_u64().unwrap() as usize);

        let sampled: Vec<_> = laid.frames.iter().map(|&i| frames.frames[i as usize].clone()).collect();
        let patches = preprocess_video(&sampled, laid.grid, &settings).unwrap();
        let want = to_vec(&npy_of(name, reference["files"]["pixel_values_videos"].as_str().unwrap()));
        let diff = max_diff(&patches.values, &want);
        eprintln!("{name} pixel_values_videos: max abs diff {diff:e}");
        assert!(diff <= PIXEL_TOLERANCE, "{name}: video pixel values differ by up to {diff}");

        let mut model = ReadyModel::load(&dir_of(name), &LoadOptions::default(), &mut |_| {}).unwrap();
        assert!(model.info.video, "{name} reads video");
        model.video_reader = frames.clone();
        for key in ["video", "mixed", "two_videos"] {
            let chat = &video[key];
            let prompt =
                media_prompt::build(&model, &video_messages(name, key), PromptEnd::NewReply, &Default::default(), &MediaLimits::default())
                    .unwrap();
            assert_eq!(prompt.ids, ids(&chat["input_ids"]), "{name} {key}: prompt ids (timestamps included)");
            let want: Vec<Vec<i32>> = serde_json::from_value(chat["position_ids"].clone()).unwrap();
            let positions = prompt.positions.expect("multimodal RoPE positions");
            assert_eq!(positions.values, want.concat(), "{name} {key}: position ids");
            let furthest = *positions.values.iter().max().unwrap() as i64;
            assert_eq!(furthest + 1 - prompt.ids.len() as i64, chat["rope_delta"].as_i64().unwrap(), "{name} {key}: rope delta");
            let video_item = prompt.items.iter().find(|i| i.kind == confab_engine::media::MediaKind::Video).unwrap();
            assert_eq!(
                (video_item.runs.len(), video_item.span.len),
                (grid[0][0], laid.soft_tokens()),
                "{name} {key}: one run per frame group"
            );
        }
    }
}

/// `text` with each run of `pad` written once with its length (`<|video_pad|>×8`), so that a
/// layout reads at a glance.
fn squeeze(text: &str, pads: &[&str]) -> String {
    let mut out = String::new();
    let mut rest = text;
    'next: while !rest.is_empty() {
        for pad in pads {
            let run = rest.len() - rest.trim_start_matches(pad).len();
            if run > 0 {
                out.push_str(&format!("{pad}×{}", run / pad.len()));
                rest = &rest[run..];
                continue 'next;
            }
        }
        let c = rest.chars().next().unwrap();
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[test]
fn the_expanded_prompt_text_of_a_video_an_image_and_a_video_and_two_videos_is_the_references() {
    // The chat template writes `<|vision_start|><|video_pad|><|vision_end|>` for a video; the
    // processor replaces that whole run with the frame groups, each `<t seconds>` and its own
    // start, pads and end (transformers 4.57 to 5.9 and 5.25; 5.10 to 5.24 kept the template's
    // start and end around the groups: docs/media.md). Images keep the template's markers.
    let group = |t: &str| format!("<{t} seconds><|vision_start|><|video_pad|>×8<|vision_end|>");
    let video = format!("{}{}", group("0.1"), group("0.8"));
    let pinned = [
        ("video", format!("<|im_start|>user\n{video}What happens in this video?<|im_end|>\n<|im_start|>assistant\n")),
        (
            "mixed",
            format!(
                "<|im_start|>user\n<|vision_start|><|image_pad|>×10<|vision_end|>{video}Is the picture in the video?<|im_end|>\n<|im_start|>assistant\n"
            ),
        ),
        ("two_videos", format!("<|im_start|>user\n{video}{video}Are these two videos the same?<|im_end|>\n<|im_start|>assistant\n")),
    ];
    for name in ["qwen3_vl", "qwen3_5_vl"] {
        let reference = reference_of(name);
        let mut model = ReadyModel::load(&dir_of(name), &LoadOptions::default(), &mut |_| {}).unwrap();
        model.video_reader = FixtureFrames::of(name);
        for (key, want) in &pinned {
            let prompt =
                media_prompt::build(&model, &video_messages(name, key), PromptEnd::NewReply, &Default::default(), &MediaLimits::default())
                    .unwrap();
            let text = model.tokenizer.decode(&prompt.ids, false).unwrap();
            let reference_text = reference["video"][*key]["expanded_text"].as_str().unwrap();
            assert_eq!(text, reference_text, "{name} {key}: the expanded prompt, as transformers 5.25 writes it");
            assert_eq!(&squeeze(&text, &["<|video_pad|>", "<|image_pad|>"]), want, "{name} {key}: the pinned layout");
            let videos = prompt.items.iter().filter(|i| i.kind == confab_engine::media::MediaKind::Video).count();
            assert_eq!(
                text.matches("<|vision_start|>").count(),
                2 * videos + (key == &"mixed") as usize,
                "{name} {key}: one start per group"
            );
        }
    }
}

#[test]
fn vision_tower_on_the_reference_video_patches_gives_its_rows_and_deepstack_features() {
    for (name, streams) in
        [("qwen3_vl", &["video_embeds", "video_deepstack_0", "video_deepstack_1"][..]), ("qwen3_5_vl", &["video_embeds"][..])]
    {
        let reference = reference_of(name);
        let encoder = Qwen3VlEncoder::load(&dir_of(name), Dtype::Float32).unwrap().expect("a vision tower");
        let pixels = npy_of(name, reference["files"]["pixel_values_videos"].as_str().unwrap());
        let grid: Vec<[usize; 3]> = serde_json::from_value(reference["video"]["video"]["video_grid_thw"].clone()).unwrap();
        let out = encoder.encode(&to_vec(&pixels), grid[0], pixels.dim(1) as usize).unwrap();
        assert_eq!(out.dim(0) as usize, streams.len(), "{name}: merger rows and deepstack sets");
        for (k, stream) in streams.iter().enumerate() {
            let want = to_vec(&npy_of(name, reference["files"][*stream].as_str().unwrap()));
            let diff = max_diff(&to_vec(&out.index(k as i32)), &want);
            eprintln!("{name} tower {stream}: max abs diff {diff:e}");
            assert!(diff < TOWER_TOLERANCE, "{name}: {stream} differs by up to {diff}");
        }
    }
}

#[test]
fn a_video_an_image_with_a_video_and_two_videos_through_the_engine_give_the_reference_logits_and_tokens_then_the_encoder_cache_serves_them()
{
    let name = "qwen3_vl";
    let reference = reference_of(name);
    let video = &reference["video"];
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let (engine, model) = video_engine(name, no_prefix_cache());

    let first = ask(&engine, model, video_messages(name, "video"), steps);
    assert_eq!(first.plan.prompt_tokens, video["video"]["input_ids"].as_array().unwrap().len());
    assert_eq!(sources(&first.plan), [EncoderUse::Miss]);
    assert_eq!(first.plan.media[0].frames, Some(4), "the plan says how many frames were read");
    assert_eq!(first.plan.media[0].soft_tokens, 16);
    check(&first, &video["video"], "video (tower runs)");

    let again = ask(&engine, model, video_messages(name, "video"), steps);
    assert_eq!((sources(&again.plan), again.plan.tower_runs), (vec![EncoderUse::Memory], 0), "the encoder cache serves the video");
    check(&again, &video["video"], "video (encoder cache hit)");
    assert_eq!(max_diff(&again.first_logits, &first.first_logits), 0.0, "a hit gives exactly the rows the tower gave (deepstack too)");

    // The image is new, the video is the cached one.
    let mixed = ask(&engine, model, video_messages(name, "mixed"), steps);
    assert_eq!(sources(&mixed.plan), [EncoderUse::Miss, EncoderUse::Memory]);
    assert_eq!(mixed.plan.media.iter().map(|m| m.frames).collect::<Vec<_>>(), [None, Some(4)]);
    check(&mixed, &video["mixed"], "image + video");

    // The same video twice: both from the cached entry.
    let two = ask(&engine, model, video_messages(name, "two_videos"), steps);
    assert_eq!(two.plan.prompt_tokens, video["two_videos"]["input_ids"].as_array().unwrap().len());
    assert_eq!(sources(&two.plan), [EncoderUse::Memory, EncoderUse::Memory]);
    check(&two, &video["two_videos"], "two videos");
}

#[test]
fn a_video_through_a_cold_engine_matches_and_the_encoder_cache_disk_tier_serves_it_after_a_restart() {
    let name = "qwen3_vl";
    let reference = reference_of(name);
    let video = &reference["video"];
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let cache = tempfile::tempdir().unwrap();
    let options = || {
        let mut o = no_prefix_cache();
        o.encoder.dir = Some(cache.path().to_path_buf());
        o
    };
    let cold = {
        let (engine, model) = video_engine(name, options());
        let out = ask(&engine, model, video_messages(name, "mixed"), steps);
        assert_eq!(sources(&out.plan), [EncoderUse::Miss, EncoderUse::Miss]);
        check(&out, &video["mixed"], "image + video, cold");
        out
    };
    let (engine, model) = video_engine(name, options());
    let out = ask(&engine, model, video_messages(name, "mixed"), steps);
    assert_eq!((sources(&out.plan), out.plan.tower_runs), (vec![EncoderUse::Disk, EncoderUse::Disk], 0));
    check(&out, &video["mixed"], "image + video, encoder cache from disk");
    assert_eq!(max_diff(&out.first_logits, &cold.first_logits), 0.0, "the disk tier gives back exactly the rows");
}

#[test]
fn the_encoder_cache_keys_a_video_by_its_sampling_too() {
    // The same checkpoint with another frame rate in its video processor config: the tower's
    // identity is the same (same weights and config.json), the sampling is not, so the video is
    // not served from the other's entry, although both sample the same 4 frames here.
    let name = "qwen3_vl";
    let reference = reference_of(name);
    let folder = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir_of(name)).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            std::fs::copy(&path, folder.path().join(path.file_name().unwrap())).unwrap();
        }
    }
    let config_path = folder.path().join("video_preprocessor_config.json");
    let mut config: Value = json(&config_path);
    config["fps"] = serde_json::json!(3.0);
    std::fs::write(&config_path, config.to_string()).unwrap();
    use confab_engine::model::MediaProcessor;
    let towers = [dir_of(name), folder.path().to_path_buf()].map(|d| Qwen3VlEncoder::load(&d, Dtype::Float32).unwrap().unwrap());
    assert_eq!(towers[0].identity(), towers[1].identity(), "one tower identity for both folders");
    assert_ne!(towers[0].video_sampling(), towers[1].video_sampling());

    let (engine, model) = video_engine(name, no_prefix_cache());
    let (other, _) = engine.load(folder.path(), LoadOptions::default(), |_| {}).unwrap();
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let first = ask(&engine, model, video_messages(name, "video"), steps);
    assert_eq!(sources(&first.plan), [EncoderUse::Miss]);
    let second = ask(&engine, other, video_messages(name, "video"), steps);
    assert_eq!(sources(&second.plan), [EncoderUse::Miss], "another sampling is another encoder-cache entry");
    check(&second, &reference["video"]["video"], "video, fps 3 (the same 4 frames)");
    let third = ask(&engine, other, video_messages(name, "video"), steps);
    assert_eq!(sources(&third.plan), [EncoderUse::Memory]);
}

#[test]
fn a_second_turn_resumes_past_the_video_with_its_rope_delta() {
    for name in ["qwen3_vl", "qwen3_5_vl"] {
        let (engine, model) = video_engine(name, EngineOptions::default());
        let first = ask(&engine, model, video_messages(name, "mixed"), 8);
        let mut turn = video_messages(name, "mixed");
        turn.push(ChatMessage::assistant(first.text.clone()));
        turn.push(ChatMessage::user("And the colours?"));
        let second = ask(&engine, model, turn.clone(), 8);
        let reference_ids = ids(&reference_of(name)["video"]["mixed"]["input_ids"]);
        let video_end = reference_ids.iter().rposition(|&t| t == 6).unwrap() + 1; // past the last <|video_pad|>
        assert!(
            second.plan.reused_tokens >= video_end,
            "{name}: reused {} tokens, the video ends at {video_end}",
            second.plan.reused_tokens
        );
        assert_eq!(sources(&second.plan), [EncoderUse::Prefix, EncoderUse::Prefix], "{name}");

        let (cold_engine, cold_model) = video_engine(name, no_prefix_cache());
        let cold = ask(&cold_engine, cold_model, turn, 8);
        assert_eq!(cold.plan.reused_tokens, 0);
        assert_eq!(second.ids, cold.ids, "{name}: resumed and cold second turns");
        let diff = max_diff(&second.first_logits, &cold.first_logits);
        eprintln!("{name} second turn after a video: resumed vs cold first-step logits max abs diff {diff:e}");
        assert!(diff < LOGIT_TOLERANCE, "{name}: resumed second turn differs from cold by up to {diff}");
    }
}

#[test]
fn qwen3_5_with_vision_gives_the_reference_logits_and_tokens_for_a_video_an_image_with_a_video_and_two_videos() {
    let name = "qwen3_5_vl";
    let reference = reference_of(name);
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let (engine, model) = video_engine(name, no_prefix_cache());
    for key in ["video", "mixed", "two_videos"] {
        let out = ask(&engine, model, video_messages(name, key), steps);
        check(&out, &reference["video"][key], &format!("qwen3_5_vl {key}"));
    }
}

#[test]
fn a_video_of_one_frame_is_a_typed_error_naming_the_file() {
    // Qwen3-VL reads temporal patches of 2 frames: transformers refuses fewer too.
    let name = "qwen3_vl";
    let one = FixtureFrames::of(name).frames[..1].to_vec();
    let reader = std::sync::Arc::new(FixtureFrames { frames: one, fps: 10.0 });
    let engine = Engine::start(EngineOptions { video_reader: Some(reader), ..no_prefix_cache() }).unwrap();
    let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let request = Request::new(model, Prompt::Chat(video_messages(name, "video")), SamplingParams::greedy());
    let error = engine.generate(request).find_map(|e| if let Event::Error(e) = e { Some(e) } else { None });
    match error {
        Some(confab_engine::EngineError::Media { file, problem: confab_engine::MediaProblem::Unsuitable { detail } }) => {
            assert_eq!(file, "moving.gif");
            assert!(detail.contains("at least 2 frames"), "{detail}");
        }
        other => panic!("expected an unsuitable-video error naming the file, got {other:?}"),
    }
}

#[test]
fn the_gif_through_the_engines_own_video_decoding_gives_the_reference_logits_and_tokens() {
    // The whole path: the prompt probes media/moving.gif, decode_video reads its sampled frames
    // (a GIF's frames are exact RGB: the same as media/video_frames.npy), the tower, generate.
    let name = "qwen3_vl";
    let reference = reference_of(name);
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine = Engine::start(no_prefix_cache()).unwrap();
    let (model, info) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.video);
    for key in ["video", "mixed"] {
        let out = ask(&engine, model, video_messages(name, key), steps);
        assert_eq!(out.plan.media.iter().find(|m| m.frames.is_some()).unwrap().frames, Some(4));
        check(&out, &reference["video"][key], &format!("{key} from the GIF"));
    }
}
