//! gpt-oss (attention sinks, alternating sliding-window and full layers, YaRN RoPE, a router
//! with a bias over experts with interleaved gate/up, biases and a clamped SwiGLU) against
//! transformers 5.25's GptOssForCausalLM (torch, eager, float32) on the tiny random checkpoint
//! made by tests/reference/make_gpt_oss.py: its 40-token prompt is five 8-token windows long.
//! Prefilled in chunks of 16 and in one chunk; decoded in a batch beside other requests; a
//! continuation resumed from the cached state; and the family's load errors.

mod common;

use std::collections::HashMap;
use std::path::Path;

use common::{check_fixture, copy_of_fixture, fixture, ids, json, load_error, take_tokens};
use confab_engine::model::LoadOptions;
use confab_engine::runtime::{Engine, EngineOptions, Event, ModelId, Prompt, Request, StopReason};
use confab_engine::sample::SamplingParams;
use confab_engine::EngineError;
use mlx_rs::Array;

/// float32 on both sides; what differs is summation order.
const LOGIT_TOLERANCE: f32 = 1e-4;

#[test]
fn gpt_oss_against_transformers() {
    check_fixture("gpt_oss", LOGIT_TOLERANCE);
}

fn greedy(model: ModelId, prompt: Vec<u32>, max_tokens: u32, chunk: usize) -> Request {
    let sampling = SamplingParams { max_tokens, ..SamplingParams::greedy() };
    let mut request = Request::new(model, Prompt::Tokens(prompt), sampling);
    request.ignore_eos = true;
    request.chunk_size = chunk;
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

#[test]
fn whole_prompt_in_one_chunk() {
    let reference = json(&fixture("gpt_oss").join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("gpt_oss"), LoadOptions::default(), |_| {}).unwrap();
    let steps = reference["steps"].as_u64().unwrap() as u32;
    let got = tokens_of(engine.generate(greedy(model, ids(&reference["prompt_ids"]), steps, 64)));
    assert_eq!(got, ids(&reference["greedy_ids"]), "gpt_oss (one chunk): greedy ids");
}

/// The reference prompt decoded in a batch: requests of 5 and 23 tokens run first, the
/// reference joins after their third tokens, and one more after its own third: every row
/// gives the tokens it gives alone, the reference its transformers ids.
#[test]
fn batched_rows_give_their_own_tokens() {
    let reference = json(&fixture("gpt_oss").join("reference.json"));
    let mut options = EngineOptions::default();
    options.prefix.enabled = false;
    let engine = Engine::start(options).unwrap();
    let (model, _) = engine.load(fixture("gpt_oss"), LoadOptions::default(), |_| {}).unwrap();
    let other = |k: u32, n: u32| -> Vec<u32> { (0..n).map(|i| 3 + (i * 7 + k * 13) % 381).collect() };
    let prompts = [other(0, 5), other(1, 23), ids(&reference["prompt_ids"]), other(2, 12)];
    let max_tokens = [30u32, 26, reference["steps"].as_u64().unwrap() as u32, 20];
    let alone: Vec<Vec<u32>> = (0..4).map(|i| tokens_of(engine.generate(greedy(model, prompts[i].clone(), max_tokens[i], 16)))).collect();
    assert_eq!(alone[2], ids(&reference["greedy_ids"]), "the reference alone");

    let mut events: Vec<Vec<Event>> = (0..4).map(|_| vec![]).collect();
    let mut running = vec![];
    for i in 0..4 {
        running.push(engine.generate(greedy(model, prompts[i].clone(), max_tokens[i], 16)));
        take_tokens(&running[i], 3, &mut events[i]);
    }
    for (i, generation) in running.into_iter().enumerate() {
        let mut all = std::mem::take(&mut events[i]);
        all.extend(generation);
        assert_eq!(tokens_of(all.into_iter()), alone[i], "request {i} ({} prompt tokens) batched differs from alone", prompts[i].len());
    }
}

/// A continuation of the reference's prompt and reply resumes from the state its run left
/// (sliding windows included) and gives what an engine without the cache gives.
#[test]
fn a_continuation_resumes_from_the_cached_state() {
    let reference = json(&fixture("gpt_oss").join("reference.json"));
    let engine = Engine::start(EngineOptions::default()).unwrap();
    let (model, _) = engine.load(fixture("gpt_oss"), LoadOptions::default(), |_| {}).unwrap();
    let prompt = ids(&reference["prompt_ids"]);
    let reply = tokens_of(engine.generate(greedy(model, prompt.clone(), 12, 16)));
    let continued: Vec<u32> = prompt.iter().chain(&reply).copied().chain([5, 6, 7]).collect();
    let events: Vec<Event> = engine.generate(greedy(model, continued.clone(), 10, 16)).collect();
    let fed = prompt.len() + reply.len() - 1;
    let resumed = events.iter().any(|e| matches!(e, Event::Plan(plan) if plan.reused_tokens >= fed));
    assert!(resumed, "the continuation did not resume from the first run's state ({fed} tokens)");

    let mut options = EngineOptions::default();
    options.prefix.enabled = false;
    let plain = Engine::start(options).unwrap();
    let (plain_model, _) = plain.load(fixture("gpt_oss"), LoadOptions::default(), |_| {}).unwrap();
    assert_eq!(tokens_of(events.into_iter()), tokens_of(plain.generate(greedy(plain_model, continued, 10, 16))));
}

fn edit_weights(dir: &Path, edit: impl Fn(&mut HashMap<String, Array>)) {
    let file = dir.join("model.safetensors");
    let mut tensors = Array::load_safetensors(&file).unwrap();
    edit(&mut tensors);
    std::fs::remove_file(&file).unwrap();
    Array::save_safetensors(tensors, None, &file).unwrap();
}

fn edit_config(dir: &Path, edit: impl Fn(&mut serde_json::Value)) {
    let path = dir.join("config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut config);
    std::fs::write(&path, config.to_string()).unwrap();
}

#[test]
fn a_missing_sink_tensor_is_named() {
    let dir = copy_of_fixture("gpt_oss");
    edit_weights(dir.path(), |t| {
        t.remove("model.layers.1.self_attn.sinks").unwrap();
    });
    let err = load_error(dir.path());
    assert!(matches!(err, EngineError::CorruptWeights { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("model.layers.1.self_attn.sinks") && message.contains("missing"), "{message}");
}

#[test]
fn bad_shapes_and_settings_say_what_to_fix() {
    let dir = copy_of_fixture("gpt_oss");
    edit_weights(dir.path(), |t| {
        t.insert("model.layers.0.self_attn.sinks".into(), Array::from_slice(&[0f32; 4], &[4]));
    });
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("model.layers.0.self_attn.sinks") && message.contains("[6]"), "{message}");

    let dir = copy_of_fixture("gpt_oss");
    edit_config(dir.path(), |c| c["num_experts_per_tok"] = 9.into());
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("num_experts_per_tok is 9"), "{message}");

    let dir = copy_of_fixture("gpt_oss");
    edit_config(dir.path(), |c| c["layer_types"][2] = "linear_attention".into());
    let message = load_error(dir.path()).to_string();
    assert!(message.contains("linear_attention") && message.contains("layer_types"), "{message}");
}

/// The real gpt-oss chat template (harmony) renders each conversation of renders.json as
/// transformers does (the date aside: both write today's), `reasoning_effort` included.
#[test]
fn the_harmony_template_renders_as_transformers_does() {
    use confab_engine::text::{ChatMessage, ChatOptions, ChatTemplate, PromptEnd};

    let dir = fixture("gpt_oss_harmony");
    let template = ChatTemplate::new(&std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap()).unwrap();
    let today = ChatTemplate::new("{{ strftime_now('%Y-%m-%d') }}").unwrap().render(&[], false, None).unwrap();
    let renders = json(&dir.join("renders.json"));
    for case in renders["renders"].as_array().unwrap() {
        let name = case["name"].as_str().unwrap();
        let messages: Vec<ChatMessage> = serde_json::from_value(case["messages"].clone()).unwrap();
        let mut options = ChatOptions::default();
        if let Some(tools) = case["tools"].as_array() {
            options.tools = tools.clone();
        }
        if let Some(effort) = case.get("reasoning_effort") {
            options.switches.insert("reasoning_effort".into(), effort.clone());
        }
        let ours = template.render_prompt(&messages, "", PromptEnd::NewReply, &options).unwrap().replace(&today, "{DATE}");
        assert_eq!(ours, case["text"].as_str().unwrap(), "{name}");
    }
}

/// The format the template implies reads back what the template writes for an earlier call,
/// and the replies gpt-oss writes: analysis as reasoning, final as the answer.
#[test]
fn the_harmony_template_implies_its_reply_format() {
    use confab_engine::text::{ParsedCall, ReplyFormat, ReplyParser, ReplyPart, ToolSyntax};

    let dir = fixture("gpt_oss_harmony");
    let format = ReplyFormat::detect(Some(&std::fs::read_to_string(dir.join("chat_template.jinja")).unwrap()));
    assert_eq!(format.tools, ToolSyntax::Harmony);
    let renders = json(&dir.join("renders.json"));
    let with_tools = renders["renders"].as_array().unwrap().iter().find(|c| c["tools"].is_array()).unwrap();
    let text = with_tools["text"].as_str().unwrap();
    // The rendered call, from its header to its end.
    let call = &text[text.find("<|start|>assistant to=").unwrap() + "<|start|>assistant".len()..];
    let call = &call[..call.find("<|call|>").unwrap() + "<|call|>".len()];
    let read = |text: &str| {
        let mut parser = ReplyParser::new(format, false, Some(with_tools["tools"].as_array().unwrap().clone()));
        let mut parts = parser.push(text);
        parts.extend(parser.finish());
        parts
    };
    let arguments = serde_json::json!({"location": "Paris", "unit": "celsius"});
    assert_eq!(read(call), [ReplyPart::ToolCall(ParsedCall { name: "get_weather".into(), arguments })]);
    assert_eq!(
        read("<|channel|>analysis<|message|>It is 21 degrees.<|end|><|start|>assistant<|channel|>final<|message|>21 °C in Paris."),
        [ReplyPart::Reasoning("It is 21 degrees.".into()), ReplyPart::Content("21 °C in Paris.".into())]
    );
}

/// MXFP4 experts as OpenAI publishes them, kept packed (MLX's `mxfp4` mode), against
/// transformers on the same weights dequantized: a 32-input group's values are exact in float32
/// either way, so only summation order differs.
#[test]
fn mxfp4_experts_against_the_dequantized_reference() {
    check_fixture("gpt_oss_mxfp4", LOGIT_TOLERANCE);
}
