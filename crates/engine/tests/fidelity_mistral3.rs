//! Mistral 3 against transformers 5.25 (float32, eager) on the tiny random checkpoint of
//! tests/reference/make_mistral3.py (fixtures/tiny/mistral3: a Mistral text model with head_dim
//! × heads ≠ hidden, the Pixtral tower with silu, patch 4, merge 2, longest_edge 48):
//! - the processor: the 67 × 45 JPEG decodes and preprocesses to the reference's pixel values
//!   (resized to 48 × 32: within 1e-6, the same bytes through the same float steps), and the
//!   chat [user: image, text] gives its prompt ids ([IMG] rows closed by [IMG_BREAK], the last
//!   by [IMG_END]);
//! - the tower and projector on the reference's own pixel values: the rows within 1e-4;
//! - through the engine (prefill in chunks of 16): a text-only chat and the image chat each give
//!   first-step logits within 1e-4 and the 16 greedy ids; with the prefix cache off, a second
//!   turn with the same image takes the tower's rows from the encoder cache (no tower run) and
//!   gives the ids and logits a cold engine gives it;
//! - with the prefix cache on, a second turn resumes past the image (its [IMG_END] included) and
//!   gives the ids and logits a cold engine gives;
//! - the image chat twice (the second joining mid-way) and the text chat, decoded in one batch:
//!   each gives its reference tokens;
//! - two images of different shapes in one prompt (the second only stretched up to whole blocks):
//!   prompt ids, first-step logits within 1e-4 and the greedy ids;
//! - an image too thin to resize is a typed error, and the model still answers; mlx-vlm's tower
//!   names load to the same rows; a missing projector tensor and an unknown text model type are
//!   load errors naming them.
//!
//! Ministral 3 (fixtures/tiny/ministral3 from tests/reference/make_ministral3.py: a `ministral3`
//! text model with YaRN and queries scaled by 1 + 0.1 · ln(1 + floor(position / 8)), so the scale
//! steps every 8 positions of these 44- and 45-token prompts; head_dim 32, so decode steps take
//! the CPU kernels): the text and image chats give first-step logits within 1e-4 and the 16
//! greedy ids; decoded together in one batch (rows at different positions) each gives its
//! reference tokens; a second turn resumed from the prefix cache equals cold; the same text
//! weights as a bare Ministral3ForCausalLM folder give transformers' logits and ids.

mod common;

use common::{fixture, floats, ids, json, max_diff, reply, Reply};
use confab_engine::cache::PrefixOptions;
use confab_engine::media::{decode_image, MediaItem, MediaLimits};
use confab_engine::model::families::mistral3::config::{image_settings, Mistral3Args, VisionConfig};
use confab_engine::model::families::mistral3::processor::preprocess_image;
use confab_engine::model::families::mistral3::Mistral3Encoder;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::media::prompt as media_prompt;
use confab_engine::runtime::{EncoderUse, Engine, EngineOptions, Event, ModelId, Plan, Prompt, ReadyModel, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::{ChatMessage, PromptEnd};
use mlx_rs::{Array, Dtype};
use serde_json::Value;

/// The same bytes (Pillow-exact resize) through the same float64 → float32 rescale and float32
/// normalisation; only a last-bit difference could show.
const PIXEL_TOLERANCE: f32 = 1e-6;
/// float32 on both sides; what differs is summation order.
const TOWER_TOLERANCE: f32 = 1e-4;
const LOGIT_TOLERANCE: f32 = 1e-4;
/// `[IMG_END]` in the fixture's vocabulary (make_mistral3.py's SPECIALS).
const IMG_END: u32 = 7;

fn dir() -> std::path::PathBuf {
    fixture("mistral3")
}

fn ministral_dir() -> std::path::PathBuf {
    fixture("ministral3")
}

fn reference() -> Value {
    json(&dir().join("reference.json"))
}

fn to_vec(a: &Array) -> Vec<f32> {
    a.as_dtype(Dtype::Float32).unwrap().as_slice::<f32>().to_vec()
}

/// The image chat: [user: image, question].
fn image_chat(reference: &Value) -> Vec<ChatMessage> {
    image_chat_in(&dir(), reference)
}

/// The image chat of the fixture in `folder`.
fn image_chat_in(folder: &std::path::Path, reference: &Value) -> Vec<ChatMessage> {
    let image = &reference["image"];
    let question = image["messages"][0]["content"][1]["text"].as_str().unwrap();
    let files = image["images"].as_array().unwrap().iter().map(|p| MediaItem::image(folder.join(p.as_str().unwrap())));
    vec![ChatMessage::user(question).with_media(files)]
}

fn text_chat(reference: &Value) -> Vec<ChatMessage> {
    vec![ChatMessage::user(reference["text"]["messages"][0]["content"][0]["text"].as_str().unwrap())]
}

#[test]
fn processor_gives_the_reference_pixels_and_prompt() {
    let reference = reference();
    let path = dir().join("config.json");
    let config: Value = json(&path);
    let vision = VisionConfig::from_json(&config, &path).unwrap().unwrap();
    let args = Mistral3Args::from_json(&config, &path).unwrap();
    let (settings, _) = image_settings(&dir(), &vision, &args).unwrap();

    let file = reference["image"]["images"][0].as_str().unwrap();
    let image = decode_image(&dir().join(file), &MediaLimits::default()).unwrap();
    let pixels = preprocess_image(&image, &settings).unwrap();
    let want_size: Vec<usize> = serde_json::from_value(reference["image"]["image_sizes"][0].clone()).unwrap();
    assert_eq!([pixels.height, pixels.width], [want_size[0], want_size[1]], "resized (height, width)");
    let want = to_vec(&Array::load_numpy(dir().join("pixel_values.npy")).unwrap());
    let diff = max_diff(&pixels.values, &want);
    eprintln!("mistral3 pixel values: max abs diff {diff:e}");
    assert!(diff <= PIXEL_TOLERANCE, "pixel values differ by up to {diff}");

    let model = ReadyModel::load(&dir(), &LoadOptions::default(), &mut |_| {}).unwrap();
    assert!(model.info.vision && !model.info.audio && !model.info.video);
    assert_eq!(model.info.architecture, "mistral3");
    let prompt =
        media_prompt::build(&model, &image_chat(&reference), PromptEnd::NewReply, &Default::default(), &MediaLimits::default()).unwrap();
    assert_eq!(prompt.ids, ids(&reference["image"]["input_ids"]), "image prompt ids");
    assert_eq!(prompt.items.len(), 1);
    assert_eq!(prompt.items[0].span.len, reference["image"]["image_tokens"].as_u64().unwrap() as usize, "soft tokens");
    assert_eq!(prompt.items[0].runs.len(), want_size[0] / 8, "one run of [IMG] per row");
    assert!(prompt.positions.is_none(), "Mistral 3 places tokens in one dimension");
}

#[test]
fn tower_and_projector_give_the_reference_rows() {
    let reference = reference();
    let encoder = Mistral3Encoder::load(&dir(), Dtype::Float32).unwrap().expect("a vision tower");
    let pixels = Array::load_numpy(dir().join("pixel_values.npy")).unwrap();
    let (h, w) = (pixels.dim(1) as usize, pixels.dim(2) as usize);
    let rows = encoder.encode(&to_vec(&pixels), h, w).unwrap();
    let want = to_vec(&Array::load_numpy(dir().join(reference["files"]["image_embeds"].as_str().unwrap())).unwrap());
    let diff = max_diff(&to_vec(&rows), &want);
    eprintln!("mistral3 tower rows {:?}: max abs diff {diff:e}", rows.shape());
    assert!(diff < TOWER_TOLERANCE, "tower rows differ by up to {diff}");
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

fn check(out: &Outcome, expected: &Value, tag: &str) {
    assert_eq!(out.plan.prompt_tokens, expected["input_ids"].as_array().unwrap().len(), "{tag}: prompt tokens");
    let diff = max_diff(&out.first_logits, &floats(&expected["first_logits"]));
    eprintln!("mistral3 {tag}: first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "{tag}: first-step logits differ by up to {diff}");
    assert_eq!(out.ids, ids(&expected["greedy_ids"]), "{tag}: greedy ids");
}

fn sources(plan: &Plan) -> Vec<EncoderUse> {
    plan.media.iter().map(|m| m.encoder).collect()
}

#[test]
fn text_and_image_chats_give_the_reference_logits_and_tokens_then_the_encoder_cache_serves_a_second_turn() {
    let reference = reference();
    let steps = reference["steps"].as_u64().unwrap() as u32;
    // The prefix cache off: a second turn must take the image's rows from the encoder cache.
    let options = || EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() };
    let engine = Engine::start(options()).unwrap();
    let (model, info) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision, "the tiny Mistral 3 reads images");

    let text = ask(&engine, model, text_chat(&reference), steps);
    assert_eq!(engine.tokenize(model, Prompt::Chat(text_chat(&reference))).unwrap(), ids(&reference["text"]["input_ids"]));
    check(&text, &reference["text"], "text only");

    let first = ask(&engine, model, image_chat(&reference), steps);
    assert_eq!(sources(&first.plan), [EncoderUse::Miss]);
    assert_eq!(first.plan.tower_runs, 1);
    check(&first, &reference["image"], "image (tower runs)");

    let mut turn = image_chat(&reference);
    turn.push(ChatMessage::assistant(first.text.clone()));
    turn.push(ChatMessage::user("And the colours?"));
    let second = ask(&engine, model, turn.clone(), 8);
    assert_eq!(sources(&second.plan), [EncoderUse::Memory], "the second turn's image comes from the encoder cache");
    assert_eq!(second.plan.tower_runs, 0);

    let cold_engine = Engine::start(options()).unwrap();
    let (cold_model, _) = cold_engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let cold = ask(&cold_engine, cold_model, turn, 8);
    assert_eq!(sources(&cold.plan), [EncoderUse::Miss]);
    assert_eq!(second.ids, cold.ids, "second turn: encoder cache and cold");
    let diff = max_diff(&second.first_logits, &cold.first_logits);
    eprintln!("mistral3 second turn: encoder cache vs cold first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "second turn differs from cold by up to {diff}");
}

#[test]
fn two_images_of_different_shapes_give_the_reference_prompt_logits_and_tokens() {
    // transformers pads both into one batch and masks the tower block-diagonally; the engine runs
    // each image alone. The second (20 × 37) is under longest_edge: only stretched to 24 × 40.
    let reference = reference();
    let expected = &reference["two_images"];
    let question = expected["messages"][0]["content"][2]["text"].as_str().unwrap();
    let files = expected["images"].as_array().unwrap().iter().map(|p| MediaItem::image(dir().join(p.as_str().unwrap())));
    let messages = vec![ChatMessage::user(question).with_media(files)];

    let model = ReadyModel::load(&dir(), &LoadOptions::default(), &mut |_| {}).unwrap();
    let prompt = media_prompt::build(&model, &messages, PromptEnd::NewReply, &Default::default(), &MediaLimits::default()).unwrap();
    assert_eq!(prompt.ids, ids(&expected["input_ids"]), "two-image prompt ids");
    let runs: Vec<usize> = prompt.items.iter().map(|i| i.runs.len()).collect();
    assert_eq!(runs, [4, 5], "rows of [IMG] per image");

    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let out = ask(&engine, id, messages, reference["steps"].as_u64().unwrap() as u32);
    assert_eq!(sources(&out.plan), [EncoderUse::Miss, EncoderUse::Miss]);
    check(&out, expected, "two images");
}

#[test]
fn a_second_turn_resumes_past_the_image_from_the_prefix_cache() {
    resumes_past_the_image(&dir());
}

/// A second turn with the image chat of the fixture in `folder` resumes past the image from the
/// prefix cache and equals a cold engine's.
fn resumes_past_the_image(folder: &std::path::Path) {
    let reference = json(&folder.join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(folder, LoadOptions::default(), |_| {}).unwrap();
    let first = ask(&engine, model, image_chat_in(folder, &reference), 8);
    let mut turn = image_chat_in(folder, &reference);
    turn.push(ChatMessage::assistant(first.text.clone()));
    turn.push(ChatMessage::user("And the colours?"));
    let second = ask(&engine, model, turn.clone(), 8);
    // The image ends with its [IMG_END] (the row breaks are text inside its range).
    let prompt = ids(&reference["image"]["input_ids"]);
    let image_end = prompt.iter().rposition(|&t| t == IMG_END).unwrap() + 1;
    assert!(second.plan.reused_tokens >= image_end, "reused {} tokens, the image ends at {image_end}", second.plan.reused_tokens);
    assert_eq!(sources(&second.plan), [EncoderUse::Prefix]);
    assert_eq!(second.plan.tower_runs, 0);

    let cold_engine = Engine::start(EngineOptions::default()).unwrap();
    let (cold_model, _) = cold_engine.load(folder, LoadOptions::default(), |_| {}).unwrap();
    let cold = ask(&cold_engine, cold_model, turn, 8);
    assert_eq!(cold.plan.reused_tokens, 0);
    assert_eq!(second.ids, cold.ids, "resumed and cold second turns");
    let diff = max_diff(&second.first_logits, &cold.first_logits);
    eprintln!("mistral3 second turn: resumed vs cold first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "resumed second turn differs from cold by up to {diff}");
}

/// Three requests at once (the prefix cache off, so each computes its prompt): the image chat
/// twice, the second joining after the first's third token, and the text-only chat; batched
/// decode steps give each its reference tokens.
#[test]
fn image_and_text_requests_decoded_together_each_give_their_reference_tokens() {
    decoded_together(&dir());
}

/// `image_and_text_requests_decoded_together_each_give_their_reference_tokens` for the fixture
/// in `folder`.
fn decoded_together(folder: &std::path::Path) {
    let reference = json(&folder.join("reference.json"));
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (model, _) = engine.load(folder, LoadOptions::default(), |_| {}).unwrap();
    let request = |messages: Vec<ChatMessage>| {
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = steps;
        let mut r = Request::new(model, Prompt::Chat(messages), sampling);
        r.ignore_eos = true;
        r.chunk_size = 16;
        r
    };
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
    let first = engine.generate(request(image_chat_in(folder, &reference)));
    let mut first_events = Vec::new();
    while first_events.iter().filter(|e| matches!(e, Event::Token { .. })).count() < 3 {
        first_events.push(first.next().expect("still running"));
    }
    let second = engine.generate(request(image_chat_in(folder, &reference)));
    let third = engine.generate(request(text_chat(&reference)));
    first_events.extend(first);
    let image_ids = ids(&reference["image"]["greedy_ids"]);
    assert_eq!(tokens(first_events), image_ids, "the first image request");
    assert_eq!(tokens(second.collect()), image_ids, "the second image request, joined mid-way");
    assert_eq!(tokens(third.collect()), ids(&reference["text"]["greedy_ids"]), "the text-only request beside them");
}

#[test]
fn an_image_too_thin_to_resize_is_a_typed_error_and_the_model_still_answers() {
    let reference = reference();
    let folder = tempfile::tempdir().unwrap();
    let thin = folder.path().join("thin.png");
    // 1000 × 1 into longest_edge 48: the height floors to 0, which Pillow cannot resize to.
    image::RgbImage::from_pixel(1000, 1, image::Rgb([200, 30, 90])).save(&thin).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(dir(), LoadOptions::default(), |_| {}).unwrap();
    let messages = vec![ChatMessage::user("What is this?").with_media([MediaItem::image(&thin)])];
    let mut request = Request::new(model, Prompt::Chat(messages), SamplingParams::greedy());
    request.ignore_eos = true;
    let mut error = None;
    for event in engine.generate(request) {
        if let Event::Error(e) = event {
            error = Some(e);
        }
    }
    let error = error.expect("a thin image is refused").to_string();
    assert!(error.contains("thin.png") && error.contains("vanish"), "the error names the file and why: {error}");
    let again = ask(&engine, model, text_chat(&reference), 4);
    assert_eq!(again.ids, ids(&reference["text"]["greedy_ids"])[..4], "the model still answers");
}

/// A copy of the fixture folder in a temporary directory, its weights passed through `edit`.
fn edited_copy(edit: impl Fn(std::collections::HashMap<String, Array>) -> std::collections::HashMap<String, Array>) -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let entry = entry.unwrap();
        if entry.file_type().unwrap().is_file() && entry.file_name() != "model.safetensors" {
            std::fs::copy(entry.path(), copy.path().join(entry.file_name())).unwrap();
        }
    }
    let tensors = edit(Array::load_safetensors(dir().join("model.safetensors")).unwrap());
    Array::save_safetensors(tensors, None, copy.path().join("model.safetensors")).unwrap();
    copy
}

#[test]
fn mlx_vlm_tower_names_and_a_channels_last_convolution_give_the_same_rows() {
    // mlx-vlm's conversions name the tower `vision_tower.vision_model.*` and store the patch
    // convolution channels-last.
    let copy = edited_copy(|tensors| {
        tensors
            .into_iter()
            .map(|(name, a)| match name.strip_prefix("vision_tower.") {
                Some(rest) if rest == "patch_conv.weight" => {
                    (format!("vision_tower.vision_model.{rest}"), a.transpose_axes(&[0, 2, 3, 1]).unwrap())
                }
                Some(rest) => (format!("vision_tower.vision_model.{rest}"), a),
                None => (name, a),
            })
            .collect()
    });
    let pixels = Array::load_numpy(dir().join("pixel_values.npy")).unwrap();
    let (h, w) = (pixels.dim(1) as usize, pixels.dim(2) as usize);
    let rows = |folder: &std::path::Path| {
        let encoder = Mistral3Encoder::load(folder, Dtype::Float32).unwrap().expect("a vision tower");
        to_vec(&encoder.encode(&to_vec(&pixels), h, w).unwrap())
    };
    let diff = max_diff(&rows(copy.path()), &rows(&dir()));
    assert!(diff <= 1e-6, "renamed tower rows differ by up to {diff}");
    let model = ReadyModel::load(copy.path(), &LoadOptions::default(), &mut |_| {}).unwrap();
    assert!(model.info.vision);
}

#[test]
fn a_checkpoint_without_its_projector_is_a_load_error_naming_the_tensor() {
    let copy = edited_copy(|tensors| tensors.into_iter().filter(|(name, _)| !name.starts_with("multi_modal_projector.linear_2")).collect());
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let error = engine.load(copy.path(), LoadOptions::default(), |_| {}).expect_err("no projector").to_string();
    assert!(error.contains("multi_modal_projector.linear_2"), "the error names the tensor: {error}");
}

#[test]
fn an_unknown_text_model_type_is_refused_by_name() {
    let copy = edited_copy(|tensors| tensors);
    let path = copy.path().join("config.json");
    let mut config = json(&path);
    config["text_config"]["model_type"] = "mixtral".into();
    std::fs::write(&path, config.to_string()).unwrap();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let error = engine.load(copy.path(), LoadOptions::default(), |_| {}).expect_err("mixtral text").to_string();
    assert!(error.contains("mixtral"), "the error names the text model type: {error}");
}

#[test]
fn ministral3_text_and_image_chats_give_the_reference_logits_and_tokens() {
    let folder = ministral_dir();
    let reference = json(&folder.join("reference.json"));
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let engine =
        Engine::start(EngineOptions { prefix: PrefixOptions { enabled: false, ..Default::default() }, ..Default::default() }).unwrap();
    let (model, info) = engine.load(&folder, LoadOptions::default(), |_| {}).unwrap();
    assert!(info.vision, "the tiny Ministral 3 reads images");
    // Prefill in chunks of 16: chunks start mid-interval of the query scale (positions 16, 32).
    let text = ask(&engine, model, text_chat(&reference), steps);
    assert_eq!(engine.tokenize(model, Prompt::Chat(text_chat(&reference))).unwrap(), ids(&reference["text"]["input_ids"]));
    check(&text, &reference["text"], "ministral3 text only");
    let image = ask(&engine, model, image_chat_in(&folder, &reference), steps);
    assert_eq!(sources(&image.plan), [EncoderUse::Miss]);
    check(&image, &reference["image"], "ministral3 image");
}

#[test]
fn ministral3_image_and_text_requests_decoded_together_each_give_their_reference_tokens() {
    decoded_together(&ministral_dir());
}

#[test]
fn ministral3_second_turn_resumes_past_the_image_from_the_prefix_cache() {
    resumes_past_the_image(&ministral_dir());
}

/// The Ministral 3 fixture's text weights as a bare Ministral3ForCausalLM folder: config.json is
/// its text_config, the tensors its `language_model.*` ones with that prefix removed.
fn ministral3_causal_lm_folder() -> tempfile::TempDir {
    let folder = tempfile::tempdir().unwrap();
    for name in ["tokenizer.json", "tokenizer_config.json", "chat_template.jinja", "generation_config.json"] {
        std::fs::copy(ministral_dir().join(name), folder.path().join(name)).unwrap();
    }
    let mut config = json(&ministral_dir().join("config.json"))["text_config"].clone();
    config["architectures"] = serde_json::json!(["Ministral3ForCausalLM"]);
    std::fs::write(folder.path().join("config.json"), config.to_string()).unwrap();
    let tensors: std::collections::HashMap<String, Array> = Array::load_safetensors(ministral_dir().join("model.safetensors"))
        .unwrap()
        .into_iter()
        .filter_map(|(name, a)| name.strip_prefix("language_model.").map(|n| (n.to_string(), a)))
        .collect();
    Array::save_safetensors(tensors, None, folder.path().join("model.safetensors")).unwrap();
    folder
}

#[test]
fn a_bare_ministral3_text_checkpoint_gives_the_reference_logits_and_tokens() {
    let reference = json(&ministral_dir().join("reference.json"));
    let expected = &reference["causal_lm"];
    let folder = ministral3_causal_lm_folder();
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(folder.path(), LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.architecture, "ministral3");
    assert!(!info.vision);
    let out = ask(&engine, model, text_chat(&reference), reference["steps"].as_u64().unwrap() as u32);
    assert_eq!(out.plan.prompt_tokens, reference["text"]["input_ids"].as_array().unwrap().len());
    let diff = max_diff(&out.first_logits, &floats(&expected["first_logits"]));
    eprintln!("ministral3 causal LM: first-step logits max abs diff {diff:e}");
    assert!(diff < LOGIT_TOLERANCE, "causal LM first-step logits differ by up to {diff}");
    assert_eq!(out.ids, ids(&expected["greedy_ids"]), "causal LM greedy ids");
}

#[test]
fn released_folders_preprocessor_config_is_read_and_a_patch_mismatch_is_refused() {
    // Released folders keep the image processor in preprocessor_config.json, beside
    // processor_config.json; it takes precedence over the nested copy.
    let copy = edited_copy(|tensors| tensors);
    let path = copy.path().join("config.json");
    let config = json(&path);
    let vision = VisionConfig::from_json(&config, &path).unwrap().unwrap();
    let args = Mistral3Args::from_json(&config, &path).unwrap();
    std::fs::write(copy.path().join("preprocessor_config.json"), r#"{"size": {"longest_edge": 32}, "resample": 3}"#).unwrap();
    let (settings, markers) = image_settings(copy.path(), &vision, &args).unwrap();
    assert_eq!(settings.max_size, (32, 32));
    assert_eq!(markers.row_break, "[IMG_BREAK]");
    // 67 × 45 into 32: 32 × 21, up to whole 8-pixel blocks: 32 × 24, 4 × 3 tokens.
    assert_eq!(confab_engine::model::families::mistral3::processor::token_grid(45, 67, &settings).unwrap(), (3, 4));

    let processor = copy.path().join("processor_config.json");
    let mut p = json(&processor);
    p["patch_size"] = 14.into();
    std::fs::write(&processor, p.to_string()).unwrap();
    let error = image_settings(copy.path(), &vision, &args).unwrap_err().to_string();
    assert!(error.contains("patch 14") && error.contains("processor_config.json"), "the error says which file and why: {error}");
}
