//! The request API: event order, usage, cancellation, chunked prefill, stop strings.

use std::path::PathBuf;

use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Prompt, Request, StopReason};
use confab_engine::sample::SamplingParams;

fn tiny_llama() -> (Engine, ModelId) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/llama");
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (id, _) = engine.load(dir, LoadOptions::default(), |_| {}).unwrap();
    (engine, id)
}

fn greedy(max_tokens: u32) -> SamplingParams {
    let mut s = SamplingParams::greedy();
    s.max_tokens = max_tokens;
    s
}

#[test]
fn plan_then_tokens_then_done_with_usage() {
    let (engine, model) = tiny_llama();
    let mut request = Request::new(model, Prompt::Tokens((3..43).collect()), greedy(5));
    request.ignore_eos = true;
    request.chunk_size = 16;
    let events: Vec<Event> = engine.generate(request).collect();
    let Event::Plan(plan) = &events[0] else { panic!("first event is the plan: {events:?}") };
    assert_eq!((plan.prompt_tokens, plan.chunks, plan.reuse_source), (40, 3, "none"));
    assert_eq!(events.iter().filter(|e| matches!(e, Event::Token { .. })).count(), 5);
    let Some(Event::Done { reason, usage, timings }) = events.last() else { panic!("last event is Done") };
    assert_eq!(*reason, StopReason::MaxTokens);
    assert_eq!((usage.prompt, usage.cached, usage.generated), (40, 0, 5));
    assert!(timings.time_to_first_token_ms > 0.0 && timings.peak_memory_bytes > 0);
}

#[test]
fn a_client_that_reads_nothing_holds_up_no_other_request() {
    // The engine never waits for a client, the app's window included: a request whose events
    // nobody reads runs beside another, whose tokens all come; the unread one's are all there
    // to read afterwards. (The engine has no way for a client to hold it: events go into an
    // unbounded channel and the request API has nothing to wait on.)
    let (engine, model) = tiny_llama();
    let request = |first: u32| {
        let mut request = Request::new(model, Prompt::Tokens((first..first + 40).collect()), greedy(24));
        request.ignore_eos = true;
        request
    };
    let tokens = |events: &[Event]| events.iter().filter(|e| matches!(e, Event::Token { .. })).count();
    let unread = engine.generate(request(3));
    let read: Vec<Event> = engine.generate(request(5)).collect();
    assert_eq!(tokens(&read), 24);
    assert!(matches!(read.last(), Some(Event::Done { reason: StopReason::MaxTokens, .. })));
    let later: Vec<Event> = unread.collect();
    assert_eq!(tokens(&later), 24);
    assert!(matches!(later.last(), Some(Event::Done { reason: StopReason::MaxTokens, .. })));
}

#[test]
fn chunk_size_does_not_change_the_output() {
    let (engine, model) = tiny_llama();
    let run = |chunk: usize| -> Vec<u32> {
        let mut request = Request::new(model, Prompt::Tokens((3..103).collect()), greedy(12));
        request.ignore_eos = true;
        request.chunk_size = chunk;
        engine.generate(request).filter_map(|e| if let Event::Token { id, .. } = e { Some(id) } else { None }).collect()
    };
    let whole = run(4096);
    assert_eq!(whole.len(), 12);
    assert_eq!(run(7), whole);
    assert_eq!(run(1), whole);
}

#[test]
fn cancel_takes_effect_within_one_step() {
    let (engine, model) = tiny_llama();
    for sampling in [greedy(200), SamplingParams { seed: Some(7), max_tokens: 200, ..Default::default() }] {
        let mut request = Request::new(model, Prompt::Tokens(vec![5, 6, 7]), sampling);
        request.ignore_eos = true;
        let generation = engine.generate(request);
        let done = |event: &Event| match event {
            Event::Done { reason, usage, .. } => Some((*reason, usage.generated)),
            _ => None,
        };
        // Tokens read or already sent when cancel was called: on a loaded machine the engine can
        // run several steps ahead of this reader, and what it had sent does not count against it.
        let mut before_cancel = 0;
        let mut after_cancel = 0;
        let mut cancelled = false;
        let mut stop = None;
        while let Some(event) = generation.next() {
            match event {
                Event::Token { .. } if cancelled => after_cancel += 1,
                Event::Token { .. } => {
                    before_cancel += 1;
                    if before_cancel == 3 {
                        generation.cancel();
                        cancelled = true;
                        for queued in std::iter::from_fn(|| generation.try_next()) {
                            match queued {
                                Event::Token { .. } => before_cancel += 1,
                                other => stop = stop.or(done(&other)),
                            }
                        }
                    }
                }
                other => stop = stop.or(done(&other)),
            }
        }
        let (reason, generated) = stop.expect("a Done event");
        assert_eq!(reason, StopReason::Cancelled);
        assert!(generated <= before_cancel + 1, "{generated} generated, {before_cancel} sent before cancel");
        // The engine may already be computing the next step when cancel arrives; that step is the last.
        assert!(after_cancel <= 1, "{after_cancel} tokens after cancel");
    }
}

#[test]
fn a_new_engine_thread_per_engine_and_requests_in_order() {
    let (engine, model) = tiny_llama();
    let a = engine.generate(Request::new(model, Prompt::Tokens(vec![5, 6]), greedy(3)));
    let b = engine.generate(Request::new(model, Prompt::Tokens(vec![5, 6]), greedy(3)));
    let ids = |g: confab_engine::runtime::Generation| -> Vec<u32> {
        g.filter_map(|e| if let Event::Token { id, .. } = e { Some(id) } else { None }).collect()
    };
    assert_eq!(ids(a), ids(b), "the same request twice gives the same greedy tokens");
}

#[test]
fn done_names_the_stop_string_that_ended_the_reply() {
    let (engine, model) = tiny_llama();
    let run = |stop: Vec<String>| -> (String, StopReason, Option<String>) {
        let mut sampling = greedy(16);
        sampling.stop = stop;
        let mut request = Request::new(model, Prompt::Tokens(vec![5, 6, 7]), sampling);
        request.ignore_eos = true;
        let mut text = String::new();
        for event in engine.generate(request) {
            match event {
                Event::Token { text: piece, .. } | Event::Text(piece) => text.push_str(&piece),
                Event::Done { reason, usage, .. } => return (text, reason, usage.stop_string),
                Event::Plan(_) | Event::Canvas(_) | Event::Queued { .. } => {}
                Event::Error(e) => panic!("{e}"),
            }
        }
        panic!("no Done event")
    };
    let (whole, reason, matched) = run(vec![]);
    assert_eq!((reason, matched), (StopReason::MaxTokens, None));
    // A piece from the middle of the greedy reply, listed after stop strings it never writes.
    let piece: String = whole.chars().skip(whole.chars().count() / 2).take(2).collect();
    assert!(!piece.is_empty(), "the tiny model writes some text: {whole:?}");
    let (text, reason, matched) = run(vec!["\u{1}never".into(), piece.clone(), "\u{2}nor".into()]);
    assert_eq!((reason, matched.as_deref()), (StopReason::StopString, Some(piece.as_str())));
    assert!(whole.starts_with(&text) && !text.contains(&piece), "{text:?} is {whole:?} cut before {piece:?}");
}
