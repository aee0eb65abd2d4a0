//! What a denoising reply streams (the tiny random DiffusionGemma, canvases of 8 tokens): a
//! finished canvas's tokens and then its `Canvas` event with `finished`; with `canvas_steps`, the
//! canvas as each step left it before that (every position's text, accepted or guessed), one
//! event per step; and the same reply either way.

mod common;

use common::fixture;
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{CanvasUpdate, Engine, EngineOptions, Event, Prompt, Request, StopReason, Timings, Usage};
use confab_engine::sample::SamplingParams;
use confab_engine::ChatMessage;

const CANVAS: usize = 8;

struct Streamed {
    events: Vec<Event>,
    usage: Usage,
    timings: Timings,
    reason: StopReason,
}

fn stream(canvas_steps: bool) -> Streamed {
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, info) = engine.load(fixture("diffusion_gemma"), LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(info.denoising.as_ref().map(|p| p.canvas_length), Some(CANVAS), "the loaded model says its canvas");
    let sampling = SamplingParams { max_tokens: 3 * CANVAS as u32, seed: Some(3), ..SamplingParams::default() };
    let mut request = Request::new(model, Prompt::Chat(vec![ChatMessage::user("Tell me a story.")]), sampling);
    request.canvas_steps = canvas_steps;
    request.reuse_prefix = false;
    let mut events = vec![];
    for event in engine.generate(request) {
        match event {
            Event::Done { reason, usage, timings } => return Streamed { events, usage, timings, reason },
            Event::Error(e) => panic!("{e}"),
            other => events.push(other),
        }
    }
    panic!("no Done event")
}

fn canvases(events: &[Event]) -> Vec<&CanvasUpdate> {
    events.iter().filter_map(|e| if let Event::Canvas(c) = e { Some(c) } else { None }).collect()
}

fn tokens(events: &[Event]) -> Vec<u32> {
    events.iter().filter_map(|e| if let Event::Token { id, .. } = e { Some(*id) } else { None }).collect()
}

#[test]
fn a_finished_canvas_follows_its_tokens() {
    let run = stream(false);
    let updates = canvases(&run.events);
    assert!(updates.iter().all(|c| c.finished && c.pieces.is_empty()), "without canvas_steps, only finished canvases: {updates:?}");
    let finished: Vec<usize> = updates.iter().map(|c| c.index).collect();
    assert_eq!(finished, (0..finished.len()).collect::<Vec<_>>());
    // Each finished canvas comes after its 8 tokens (the last may end the reply instead).
    let mut seen_tokens = 0;
    for event in &run.events {
        match event {
            Event::Token { .. } => seen_tokens += 1,
            Event::Canvas(c) => assert_eq!(seen_tokens, (c.index + 1) * CANVAS, "canvas {} after its tokens", c.index),
            _ => {}
        }
    }
    let steps: Vec<usize> = updates.iter().map(|c| c.steps).collect();
    assert_eq!(steps, run.usage.steps_per_canvas[..steps.len()], "the events' steps are the usage's");
    assert!(run.timings.decode_tokens_per_s > 0.0, "canvas tokens per second: {:?}", run.timings);
    if run.reason == StopReason::MaxTokens {
        assert_eq!(run.usage.generated, 3 * CANVAS);
    }
}

#[test]
fn canvas_steps_show_each_step_and_change_nothing_else() {
    let watched = stream(true);
    let plain = stream(false);
    assert_eq!(tokens(&watched.events), tokens(&plain.events), "the same seed, the same reply");
    assert_eq!(watched.usage.steps_per_canvas, plain.usage.steps_per_canvas);
    let updates = canvases(&watched.events);
    let forming: Vec<&&CanvasUpdate> = updates.iter().filter(|c| !c.finished).collect();
    // One event per step but the last of each canvas (whose tokens are streamed instead).
    let expected: usize = watched.usage.steps_per_canvas.iter().map(|s| s - 1).sum();
    assert_eq!(forming.len(), expected, "{:?}", watched.usage.steps_per_canvas);
    for c in &forming {
        assert_eq!(c.pieces.len(), CANVAS);
        assert!(c.pieces.iter().any(|p| p.accepted), "the sampler accepts at least the most certain token: {c:?}");
    }
    // Steps count up within a canvas.
    for pair in forming.windows(2) {
        if pair[0].index == pair[1].index {
            assert_eq!(pair[1].steps, pair[0].steps + 1);
        }
    }
}
