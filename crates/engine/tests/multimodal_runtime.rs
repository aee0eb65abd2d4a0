//! Images and audio through the runtime, on the tiny Gemma 4 checkpoint
//! (tests/reference/fixtures/tiny/gemma4): prompt building from chat messages with media, the
//! prefix and encoder caches' identities, prefill chunks that never split an image, and the
//! errors for bad media.
//!
//! The towers here are `ReferenceTowers`: they check the preprocessed input's size and return
//! transformers' own tower outputs from media_reference/ (image_embeds.npy, audio_embeds.npy),
//! counting their runs. So those tests check everything but the towers' arithmetic (which
//! fidelity_gemma4_towers.rs covers). The last test runs the real towers through the engine:
//! our (Pillow-exact) preprocessing of gradient.png equals the fixture's pixel_values to float
//! rounding, and the reference's 16 greedy ids come out. And from files as people drop them:
//! a JPEG photo and a 44.1 kHz stereo WAV (and the same clip as MP3 and as M4A), decoded,
//! resampled and preprocessed by the engine, give transformers' first-step logits and greedy ids
//! (media_files_reference.json, media_files_mp3_reference.json and
//! media_files_m4a_reference.json, from tests/reference/make_gemma4_media_files.py). A reply cut
//! short in a chat with the image continues from transformers' `continue_final_message` ids
//! (continuation_reference.json, from tests/reference/make_gemma4_continuation.py), reusing the
//! cut-short reply's cached prefix.

use std::cell::Cell;
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::atomic::AtomicBool;

mod common;

use common::crafted::{huge_png_header, wav_header, write};
use common::{reply, Reply};
use confab_engine::cache::{EncoderCache, EncoderOptions, PrefixCache, PrefixOptions};
use confab_engine::media::{MediaItem, MediaKind, MediaLimits, RgbImage};
use confab_engine::model::families::gemma4::processor::{AudioInput, ImageInput, MediaTokens, ProcessorConfig};
use confab_engine::model::families::gemma4::MediaEncoder;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::generate::{self, Shared};
use confab_engine::runtime::{EncoderUse, Engine, EngineOptions, Event, Plan, Prompt, ReadyModel, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::ChatMessage;
use confab_engine::{EngineError, MediaProblem};
use mlx_rs::Array;
use serde_json::Value;

const QUESTION: &str = "What do you see and hear?";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny").join(name)
}

fn gemma4() -> PathBuf {
    fixture("gemma4")
}

fn reference() -> Value {
    serde_json::from_str(&std::fs::read_to_string(gemma4().join("media_reference.json")).unwrap()).unwrap()
}

fn reference_greedy_ids() -> Vec<u32> {
    reference()["greedy_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect()
}

fn image() -> MediaItem {
    MediaItem::image(gemma4().join("media/gradient.png"))
}

fn audio() -> MediaItem {
    MediaItem::audio(gemma4().join("media/chirp.wav"))
}

/// Stand-in towers returning the reference's outputs (repeated or cut to the soft-token count).
struct ReferenceTowers {
    processor: ProcessorConfig,
    tokens: MediaTokens,
    image: Array,
    audio: Array,
    runs: Rc<Cell<usize>>,
}

impl ReferenceTowers {
    fn new(runs: Rc<Cell<usize>>) -> Self {
        let dir = gemma4();
        let arrays = dir.join("media_reference");
        Self {
            processor: ProcessorConfig::from_folder(&dir).unwrap(),
            tokens: MediaTokens::from_folder(&dir).unwrap(),
            image: Array::load_numpy(arrays.join("image_embeds.npy")).unwrap(),
            audio: Array::load_numpy(arrays.join("audio_embeds.npy")).unwrap(),
            runs,
        }
    }

    fn rows(&self, table: &Array, n: usize) -> Array {
        self.runs.set(self.runs.get() + 1);
        let have = table.dim(0) as usize;
        let index: Vec<i32> = (0..n).map(|i| (i % have) as i32).collect();
        table.take_axis(Array::from_slice(&index, &[n as i32]), 0).unwrap()
    }
}

impl MediaEncoder for ReferenceTowers {
    fn identity(&self) -> String {
        "reference-towers:tiny-gemma4".into()
    }
    fn processor(&self) -> &ProcessorConfig {
        &self.processor
    }
    fn media_tokens(&self) -> &MediaTokens {
        &self.tokens
    }
    fn has_vision(&self) -> bool {
        true
    }
    fn has_audio(&self) -> bool {
        true
    }
    fn encode_image(&self, input: &ImageInput) -> confab_engine::Result<Array> {
        Ok(self.rows(&self.image, input.soft_tokens))
    }
    fn encode_audio(&self, input: &AudioInput) -> confab_engine::Result<Array> {
        Ok(self.rows(&self.audio, input.soft_tokens))
    }
}

/// A model with stand-in towers and the caches, driven the way the engine thread drives it.
struct Rig {
    model: ReadyModel,
    prefix: PrefixCache,
    encoders: EncoderCache,
    limits: MediaLimits,
    runs: Rc<Cell<usize>>,
}

struct Outcome {
    plan: Plan,
    ids: Vec<u32>,
    text: String,
}

impl Rig {
    fn new(encoder_dir: Option<&Path>) -> Self {
        let mut model = ReadyModel::load(&gemma4(), &LoadOptions::default(), &mut |_| {}).unwrap();
        let runs = Rc::new(Cell::new(0));
        model.attach_encoder(Box::new(ReferenceTowers::new(runs.clone())));
        let encoders = EncoderCache::new(EncoderOptions { dir: encoder_dir.map(Path::to_path_buf), ..Default::default() });
        Self { model, prefix: PrefixCache::new(PrefixOptions::default()), encoders, limits: MediaLimits::default(), runs }
    }

    fn ask(&mut self, messages: Vec<ChatMessage>, chunk: usize) -> confab_engine::Result<Outcome> {
        self.ask_for(Prompt::Chat(messages), chunk, 16)
    }

    /// `max_tokens` greedy tokens for `prompt`.
    fn ask_for(&mut self, prompt: Prompt, chunk: usize, max_tokens: u32) -> confab_engine::Result<Outcome> {
        let mut sampling = SamplingParams::greedy();
        sampling.max_tokens = max_tokens;
        let mut request = Request::new(confab_engine::runtime::ModelId(1), prompt, sampling);
        request.ignore_eos = true;
        request.chunk_size = chunk;
        let (mut plan, mut ids, mut text, mut error) = (None, vec![], String::new(), None);
        let mut emit = |event| match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, text: t } => {
                ids.push(id);
                text.push_str(&t);
            }
            Event::Text(t) => text.push_str(&t),
            Event::Error(e) => error = Some(e),
            Event::Done { .. } | Event::Canvas(_) | Event::Queued { .. } => {}
        };
        let mut shared = Shared { prefix: &mut self.prefix, encoders: &mut self.encoders, limits: &self.limits };
        generate::run(&self.model, &mut shared, request, &AtomicBool::new(false), &mut emit)?;
        if let Some(e) = error {
            return Err(e);
        }
        Ok(Outcome { plan: plan.expect("a plan comes first"), ids, text })
    }
}

fn first_turn() -> Vec<ChatMessage> {
    vec![ChatMessage::user(QUESTION).with_media([image(), audio()])]
}

fn sources(plan: &Plan) -> Vec<EncoderUse> {
    plan.media.iter().map(|m| m.encoder).collect()
}

#[test]
fn image_and_audio_prompt_gives_the_reference_tokens() {
    let reference = reference();
    let mut rig = Rig::new(None);
    // Chunks of 16 would cut the 63-token image; the chunk holding its start takes all of it.
    let out = rig.ask(first_turn(), 16).unwrap();
    assert_eq!(out.ids, reference_greedy_ids(), "greedy ids");
    let plan = &out.plan;
    assert_eq!(plan.prompt_tokens, 118);
    assert_eq!(plan.media.len(), 2);
    let (img, aud) = (&plan.media[0], &plan.media[1]);
    assert_eq!((img.kind, img.soft_tokens), (MediaKind::Image, reference["image_tokens"].as_u64().unwrap() as usize));
    assert_eq!((aud.kind, aud.soft_tokens), (MediaKind::Audio, reference["audio_tokens"].as_u64().unwrap() as usize));
    assert_eq!((img.file.as_str(), img.hash.len()), ("gradient.png", 12));
    assert_eq!(sources(plan), [EncoderUse::Miss, EncoderUse::Miss]);
    assert_eq!((plan.tower_runs, rig.runs.get()), (2, 2));
    let image_range = img.position..img.position + 63;
    // Chunks never split the image, and (Gemma 4's sliding layers being rotating windows,
    // resumed from checkpoints) a chunk starts at each item, so a later prompt with other media
    // there resumes just before it.
    let chunks = confab_engine::runtime::media::prefill::chunk_ranges(0, 118, 16, std::slice::from_ref(&image_range));
    let expected = confab_engine::runtime::media::prefill::split_at(chunks, &[img.position, aud.position]);
    assert!(expected.iter().any(|r| r.start <= img.position && r.end >= img.position + 63));
    assert_eq!(plan.chunks, expected.len());
    // The same prompt in one chunk gives the same tokens (a fresh rig: nothing cached).
    let whole = Rig::new(None).ask(first_turn(), 512).unwrap();
    assert_eq!(whole.ids, out.ids);
    assert_eq!(whole.plan.chunks, 3, "text, the image, the clip and the rest: split at the two items");
}

#[test]
fn a_second_turn_reuses_the_prefix_and_runs_no_tower() {
    let mut rig = Rig::new(None);
    let first = rig.ask(first_turn(), 512).unwrap();
    assert_eq!(rig.runs.get(), 2);
    let audio_end = first.plan.media[1].position + first.plan.media[1].soft_tokens;

    let mut messages = first_turn();
    messages.push(ChatMessage::assistant(first.text.clone()));
    messages.push(ChatMessage::user("Tell me more."));
    let second = rig.ask(messages.clone(), 512).unwrap();
    assert!(second.plan.reused_tokens >= audio_end, "reused {} of {}", second.plan.reused_tokens, audio_end);
    assert_eq!(second.plan.reuse_source, "memory");
    assert_eq!(sources(&second.plan), [EncoderUse::Prefix, EncoderUse::Prefix]);
    assert_eq!((second.plan.tower_runs, rig.runs.get()), (0, 2));

    // The same image sent again in a new message: the encoder cache has it.
    messages.push(ChatMessage::assistant(second.text));
    messages.push(ChatMessage::user("And this one?").with_media([image()]));
    let third = rig.ask(messages, 512).unwrap();
    assert_eq!(sources(&third.plan), [EncoderUse::Prefix, EncoderUse::Prefix, EncoderUse::Memory]);
    assert_eq!((third.plan.tower_runs, rig.runs.get()), (0, 2));
    assert_eq!(rig.encoders.stats().memory_hits, 1);
}

#[test]
fn after_a_restart_the_encoder_cache_disk_tier_serves_the_towers_output() {
    let dir = tempfile::tempdir().unwrap();
    let before = {
        let mut rig = Rig::new(Some(dir.path()));
        let out = rig.ask(first_turn(), 512).unwrap();
        assert_eq!(rig.runs.get(), 2);
        out
    };
    // A new model, prefix cache and encoder cache over the same folder: as after a restart.
    let mut rig = Rig::new(Some(dir.path()));
    let after = rig.ask(first_turn(), 512).unwrap();
    assert_eq!(sources(&after.plan), [EncoderUse::Disk, EncoderUse::Disk]);
    assert_eq!((after.plan.tower_runs, rig.runs.get()), (0, 0));
    assert_eq!(after.plan.reused_tokens, 0);
    assert_eq!(after.ids, before.ids, "outputs read back from disk give the same tokens");
}

#[test]
fn a_different_image_with_the_same_text_does_not_reuse_past_the_image() {
    let dir = tempfile::tempdir().unwrap();
    // Same size as gradient.png (so the same soft-token count and the same token ids), other pixels.
    let original = confab_engine::media::decode_image(&gemma4().join("media/gradient.png"), &MediaLimits::default()).unwrap();
    let (width, height) = (original.width(), original.height());
    let inverted = RgbImage::from_raw(width, height, original.into_raw().iter().map(|v| 255 - v).collect()).unwrap();
    let other = dir.path().join("inverted.png");
    inverted.save(&other).unwrap();

    let mut rig = Rig::new(None);
    let first = rig.ask(first_turn(), 512).unwrap();
    let second = rig.ask(vec![ChatMessage::user(QUESTION).with_media([MediaItem::image(&other), audio()])], 512).unwrap();
    assert_eq!(second.plan.prompt_tokens, first.plan.prompt_tokens, "the same token ids");
    let image_start = second.plan.media[0].position;
    assert!(second.plan.reused_tokens <= image_start, "reused {} past the image at {image_start}", second.plan.reused_tokens);
    assert!(second.plan.reused_tokens > 0, "the text before the image is reused");
    assert_ne!(second.plan.media[0].hash, first.plan.media[0].hash);
    assert_eq!(sources(&second.plan), [EncoderUse::Miss, EncoderUse::Memory]);
    assert_eq!((second.plan.tower_runs, rig.runs.get()), (1, 3));
}

fn media_problem(result: confab_engine::Result<Outcome>, file: &str) -> MediaProblem {
    match result {
        Err(EngineError::Media { file: got, problem }) => {
            assert_eq!(got, file);
            problem
        }
        Err(other) => panic!("{file}: expected a media error, got {other}"),
        Ok(_) => panic!("{file}: expected a media error, got a reply"),
    }
}

fn ask_with(rig: &mut Rig, item: MediaItem) -> confab_engine::Result<Outcome> {
    rig.ask(vec![ChatMessage::user(QUESTION).with_media([item])], 512)
}

#[test]
fn bad_media_are_typed_errors_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut rig = Rig::new(None);

    let png = std::fs::read(gemma4().join("media/gradient.png")).unwrap();
    let cut = write(dir.path(), "cut.png", &png[..png.len() / 2]);
    assert!(matches!(media_problem(ask_with(&mut rig, MediaItem::image(&cut)), "cut.png"), MediaProblem::Corrupt { .. }));
    let mut garbage = b"\x89PNG\r\n\x1a\n".to_vec();
    garbage.extend(b"only the signature of a PNG");
    let broken = write(dir.path(), "broken.png", &garbage);
    assert!(matches!(media_problem(ask_with(&mut rig, MediaItem::image(&broken)), "broken.png"), MediaProblem::Corrupt { .. }));

    let empty = write(dir.path(), "empty.wav", b"");
    assert_eq!(media_problem(ask_with(&mut rig, MediaItem::audio(&empty)), "empty.wav"), MediaProblem::EmptyFile);
    let silent = write(dir.path(), "silent.wav", &wav_header(16_000, 1, 0));
    assert_eq!(media_problem(ask_with(&mut rig, MediaItem::audio(&silent)), "silent.wav"), MediaProblem::NoAudio);

    let huge = write(dir.path(), "huge.png", &huge_png_header());
    let err = ask_with(&mut rig, MediaItem::image(&huge)).err().unwrap();
    assert_eq!(
        err.to_string(),
        "huge.png: the image is 10000×10000 (100.0 MP) and the limit is 40.0 MP (media.image_pixels); resize it and try again"
    );

    let lecture = write(dir.path(), "lecture.wav", &wav_header(16_000, 1, 2 * 3600 * 16_000));
    let err = ask_with(&mut rig, MediaItem::audio(&lecture)).err().unwrap();
    assert_eq!(
        err.to_string(),
        "lecture.wav: the clip is 2 h 0 min long and the limit is 30 min (media.audio_seconds); trim it and try again"
    );

    let opus = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../media/tests/fixtures/media/sine1k.opus.ogg");
    assert_eq!(
        media_problem(ask_with(&mut rig, MediaItem::audio(&opus)), "sine1k.opus.ogg"),
        MediaProblem::UnsupportedCodec { codec: "Opus".into() }
    );

    let missing = dir.path().join("gone.png");
    assert!(matches!(media_problem(ask_with(&mut rig, MediaItem::image(&missing)), "gone.png"), MediaProblem::Unreadable { .. }));

    // A clip sent as an image is not an image.
    assert_eq!(
        media_problem(ask_with(&mut rig, MediaItem { kind: MediaKind::Image, ..audio() }), "chirp.wav"),
        MediaProblem::UnsupportedImage
    );
    assert_eq!(rig.runs.get(), 0, "no tower ran for a bad file");
}

#[test]
fn media_sent_to_a_text_only_model_is_a_typed_error() {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(fixture("llama"), LoadOptions::default(), |_| {}).unwrap();
    assert!(!info.vision && !info.audio);
    let video = MediaItem::video("never-read.mp4"); // refused before any file is touched
    for (item, words) in [
        (image(), "load a model with vision (e.g. Gemma 4) to send images"),
        (audio(), "load a model with audio (e.g. Gemma 4) to send audio clips"),
        (video, "load a model with video (e.g. Qwen3-VL) to send videos"),
    ] {
        let kind = item.kind;
        let prompt = Prompt::Chat(vec![ChatMessage::user(QUESTION).with_media([item])]);
        let error = engine
            .generate(Request::new(model, prompt, SamplingParams::greedy()))
            .find_map(|e| if let Event::Error(e) = e { Some(e) } else { None })
            .expect("an error");
        assert!(
            matches!(&error, EngineError::ModelCannotRead { kind: k, vision: false, audio: false, video: false, .. } if *k == kind),
            "{error:?}"
        );
        let message = error.to_string();
        assert!(message.contains("reads text only") && message.contains(words), "{message}");
    }
}

#[test]
fn stand_in_towers_make_the_model_advertise_vision_and_audio() {
    let rig = Rig::new(None);
    assert!(rig.model.info.vision && rig.model.info.audio);
    let json = serde_json::to_value(&rig.model.info).unwrap();
    assert_eq!((json["vision"].as_bool(), json["audio"].as_bool()), (Some(true), Some(true)));
}

#[test]
fn several_images_and_clips_across_turns_each_get_their_soft_tokens() {
    let mut rig = Rig::new(None);
    let messages = vec![
        ChatMessage::user("Two pictures.").with_media([image(), image()]),
        ChatMessage::assistant("I see them."),
        ChatMessage::user("And two sounds.").with_media([audio(), audio()]),
    ];
    let out = rig.ask(messages, 32).unwrap();
    let kinds: Vec<MediaKind> = out.plan.media.iter().map(|m| m.kind).collect();
    assert_eq!(kinds, [MediaKind::Image, MediaKind::Image, MediaKind::Audio, MediaKind::Audio]);
    // Each distinct file runs its tower once; its repeat shares the output.
    assert_eq!(sources(&out.plan), [EncoderUse::Miss, EncoderUse::Memory, EncoderUse::Miss, EncoderUse::Memory]);
    assert_eq!((out.plan.tower_runs, rig.runs.get()), (2, 2));
    let positions: Vec<usize> = out.plan.media.iter().map(|m| m.position).collect();
    assert!(positions.windows(2).all(|w| w[0] < w[1]));
    // The prompt's ids at the image positions are image tokens, as expand_prompt placed them.
    let ids = generate::prompt_ids(
        &rig.model,
        &Prompt::Chat(vec![ChatMessage::user("x").with_media([image()])]),
        &Default::default(),
        &rig.limits,
    )
    .unwrap();
    let image_token = rig.model.tokenizer.token_to_id("<|image|>").unwrap();
    assert_eq!(ids.iter().filter(|&&t| t == image_token).count(), 63);
}

// ---- continuing a reply cut short ----

/// A chat with the image whose last reply was cut short, and transformers' ids for it.
struct ContinuationCase {
    name: String,
    messages: Vec<ChatMessage>,
    /// `apply_chat_template(messages, continue_final_message=True)`.
    continue_ids: Vec<u32>,
    /// The chat without its last reply, with the generation prompt: where that reply began.
    reply_prompt_ids: Vec<u32>,
}

/// continuation_reference.json (tests/reference/make_gemma4_continuation.py).
fn continuation_cases() -> Vec<ContinuationCase> {
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(gemma4().join("continuation_reference.json")).unwrap()).unwrap();
    let ids = |v: &Value| v.as_array().unwrap().iter().map(|i| i.as_u64().unwrap() as u32).collect::<Vec<u32>>();
    let message = |m: &Value| {
        let role = m["role"].as_str().unwrap();
        match &m["content"] {
            Value::String(text) => ChatMessage::new(role, text.as_str()),
            Value::Array(parts) => {
                let text = parts.iter().find_map(|p| p["text"].as_str()).unwrap_or_default();
                assert!(parts.iter().filter(|p| p["type"] == "image").count() == 1 && parts.len() == 2, "{parts:?}");
                ChatMessage::new(role, text).with_media([image()])
            }
            other => panic!("content {other}"),
        }
    };
    let cases = reference["cases"].as_object().unwrap();
    cases
        .iter()
        .map(|(name, case)| ContinuationCase {
            name: name.clone(),
            messages: case["messages"].as_array().unwrap().iter().map(message).collect(),
            continue_ids: ids(&case["continue_ids"]),
            reply_prompt_ids: ids(&case["reply_prompt_ids"]),
        })
        .collect()
}

#[test]
fn continuing_a_reply_in_a_chat_with_an_image_gives_transformers_ids() {
    let rig = Rig::new(None);
    let image_token = rig.model.tokenizer.token_to_id("<|image|>").unwrap();
    for ContinuationCase { name, messages, continue_ids, reply_prompt_ids } in continuation_cases() {
        let ids = generate::prompt_ids(&rig.model, &Prompt::Continue(messages.clone()), &Default::default(), &rig.limits).unwrap();
        assert_eq!(ids, continue_ids, "{name}: continue_final_message=True");
        assert_eq!(ids.iter().filter(|&&t| t == image_token).count(), 63, "{name}: the image's soft tokens");
        let before = messages[..messages.len() - 1].to_vec();
        let reply_prompt = generate::prompt_ids(&rig.model, &Prompt::Chat(before), &Default::default(), &rig.limits).unwrap();
        assert_eq!(reply_prompt, reply_prompt_ids, "{name}: the chat the reply was written for");
        // The continuation is that chat with the reply's text so far, and no end of turn.
        assert!(ids.starts_with(&reply_prompt) && ids.len() > reply_prompt.len(), "{name}");
    }
}

#[test]
fn a_continued_reply_reuses_the_cut_short_one_and_writes_what_a_cold_start_would() {
    let question = || vec![ChatMessage::user("What do you see?").with_media([image()])];
    let mut rig = Rig::new(None);
    let cut = rig.ask_for(Prompt::Chat(question()), 512, 6).unwrap();
    let mut messages = question();
    messages.push(ChatMessage::assistant(cut.text.clone()));
    let prompt = Prompt::Continue(messages);
    let more = rig.ask_for(prompt.clone(), 512, 6).unwrap();
    let plan = &more.plan;
    // The cut-short reply's prompt and tokens were cached as it ended: the continuation reads
    // them back instead of prefilling the image again, and runs no tower.
    assert!(plan.prompt_tokens > cut.plan.prompt_tokens);
    assert!(plan.reused_tokens >= cut.plan.prompt_tokens, "reused {} of {}", plan.reused_tokens, plan.prompt_tokens);
    assert_eq!(plan.reuse_source, "memory");
    assert_eq!(sources(plan), [EncoderUse::Prefix]);
    assert_eq!((plan.tower_runs, rig.runs.get()), (0, 1));
    assert_eq!(plan.media[0].position, cut.plan.media[0].position, "the image where it was");
    // The same tokens as the continuation computed from nothing. (Not necessarily the tokens the
    // uninterrupted reply had: the tiny model's random bytes need not read back as the same ids.)
    let cold = Rig::new(None).ask_for(prompt, 512, 6).unwrap();
    assert_eq!((cold.plan.reused_tokens, cold.plan.tower_runs), (0, 1));
    assert_eq!(more.ids, cold.ids, "{:?} then {:?}", cut.text, more.text);
}

// ---- the real towers, through the public engine API ----

fn engine_with_encoder_dir(dir: Option<&Path>) -> Engine {
    let encoder = EncoderOptions { dir: dir.map(Path::to_path_buf), ..Default::default() };
    Engine::start(EngineOptions { encoder, ..Default::default() }).unwrap()
}

fn engine_ask(engine: &Engine, model: confab_engine::runtime::ModelId, messages: Vec<ChatMessage>) -> Reply {
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = 16;
    let mut request = Request::new(model, Prompt::Chat(messages), sampling);
    request.ignore_eos = true;
    request.chunk_size = 16;
    reply(engine, request)
}

#[test]
fn real_towers_end_to_end_with_caches_and_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let first = {
        let engine = engine_with_encoder_dir(Some(dir.path()));
        let (model, info) = engine.load(gemma4(), LoadOptions::default(), |_| {}).unwrap();
        assert!(info.vision && info.audio, "the tiny Gemma 4 has both towers");
        let first = engine_ask(&engine, model, first_turn());
        assert_eq!(first.ids, reference_greedy_ids(), "greedy ids through the real towers");
        assert_eq!(sources(&first.plan), [EncoderUse::Miss, EncoderUse::Miss]);
        assert_eq!(first.plan.tower_runs, 2);

        let mut messages = first_turn();
        messages.push(ChatMessage::assistant(first.text.clone()));
        messages.push(ChatMessage::user("Tell me more.").with_media([image()]));
        let second = engine_ask(&engine, model, messages);
        assert_eq!(sources(&second.plan), [EncoderUse::Prefix, EncoderUse::Prefix, EncoderUse::Memory]);
        assert_eq!(second.plan.tower_runs, 0);
        assert!(second.plan.reused_tokens > first.plan.media[1].position);
        first
    };
    let engine = engine_with_encoder_dir(Some(dir.path()));
    let (model, _) = engine.load(gemma4(), LoadOptions::default(), |_| {}).unwrap();
    let again = engine_ask(&engine, model, first_turn());
    assert_eq!(sources(&again.plan), [EncoderUse::Disk, EncoderUse::Disk]);
    assert_eq!(again.plan.tower_runs, 0);
    assert_eq!(again.ids, first.ids);
}

#[test]
fn a_jpeg_photo_and_a_44k_stereo_clip_give_the_reference_logits_and_tokens() {
    files_give_the_reference_logits_and_tokens("media_files_reference.json", "44.1 kHz stereo WAV");
}

/// The same clip as MP3: libmpg123's samples as libsndfile gives them (media_fidelity.rs holds
/// them bit for bit), through the same path; the lossy clip's features lead to other tokens.
#[test]
fn a_jpeg_photo_and_a_44k_stereo_mp3_give_the_reference_logits_and_tokens() {
    files_give_the_reference_logits_and_tokens("media_files_mp3_reference.json", "44.1 kHz stereo MP3");
}

/// The same clip as M4A (AAC-LC), which transformers reads through torchcodec: FFmpeg's AAC
/// decoder and libswresample. Where the system has FFmpeg the engine decodes with it too (the
/// reference's samples exactly: first-step logits 2.4e-5 apart); without it (or with
/// CONFAB_SYSTEM_FFMPEG=0) symphonia decodes, 16 kHz samples up to 1e-5 apart and log-mel up to
/// 7e-4 in near-silent bins (media_fidelity.rs), logits 2.7e-5 apart: held at the same tolerance
/// as WAV and MP3.
#[test]
fn a_jpeg_photo_and_a_44k_stereo_m4a_give_the_reference_logits_and_tokens() {
    files_give_the_reference_logits_and_tokens("media_files_m4a_reference.json", "44.1 kHz stereo M4A");
}

fn files_give_the_reference_logits_and_tokens(reference_file: &str, clip: &str) {
    let reference: Value = serde_json::from_str(&std::fs::read_to_string(gemma4().join(reference_file)).unwrap()).unwrap();
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let file = |key: &str| root.join(reference[key].as_str().unwrap());
    let messages = vec![ChatMessage::user(QUESTION).with_media([MediaItem::image(file("image")), MediaItem::audio(file("audio"))])];

    let engine = engine_with_encoder_dir(None);
    let (model, _) = engine.load(gemma4(), LoadOptions::default(), |_| {}).unwrap();
    let logits_file = tempfile::NamedTempFile::new().unwrap();
    let mut sampling = SamplingParams::greedy();
    sampling.max_tokens = reference["steps"].as_u64().unwrap() as u32;
    let mut request = Request::new(model, Prompt::Chat(messages), sampling);
    request.ignore_eos = true;
    request.chunk_size = 16;
    request.logits_path = Some(logits_file.path().to_path_buf());
    let (mut plan, mut ids) = (None, vec![]);
    for event in engine.generate(request) {
        match event {
            Event::Plan(p) => plan = Some(p),
            Event::Token { id, .. } => ids.push(id),
            Event::Error(e) => panic!("{e}"),
            _ => {}
        }
    }
    let plan = plan.unwrap();
    let count = |key: &str| reference[key].as_u64().unwrap() as usize;
    assert_eq!(plan.prompt_tokens, reference["input_ids"].as_array().unwrap().len(), "prompt length");
    assert_eq!((plan.media[0].soft_tokens, plan.media[1].soft_tokens), (count("image_tokens"), count("audio_tokens")));

    let got = confab_engine::npy::read_f32(logits_file.path()).unwrap();
    let want: Vec<f32> = reference["first_logits"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    assert_eq!(got.len(), want.len());
    let diff = got.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0f32, f32::max);
    eprintln!("JPEG + {clip}: first-step logits max abs diff {diff:e}");
    // float32 on both sides; what differs is summation order (as fidelity_gemma4.rs).
    assert!(diff < 1e-4, "first-step logits differ by up to {diff}");
    let want_ids: Vec<u32> = reference["greedy_ids"].as_array().unwrap().iter().map(|v| v.as_u64().unwrap() as u32).collect();
    assert_eq!(ids, want_ids, "greedy ids");
}
