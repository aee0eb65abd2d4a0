//! Released models' chat templates (Qwen3.5's and Gemma 4's, tests/reference/fixtures/templates)
//! against what transformers renders with them (reference.json, written by
//! tests/reference/make_template_references.py), and the reply format each implies: the parser
//! reads back the calls and reasoning the template writes for earlier turns.

use std::collections::BTreeMap;

use serde::Deserialize;
use serde_json::Value;

use super::{ChatMessage, ChatOptions, ChatTemplate, Markers, ParsedCall, ReplyFormat, ReplyParser, ReplyPart, ToolSyntax};

const TEMPLATES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tests/reference/fixtures/templates");
const QWEN3_5: &str = "Qwen3.5-4B.jinja";
const GEMMA4: &str = "google-gemma-4-31B-it.jinja";

#[derive(Deserialize)]
struct Reference {
    tools: Vec<Value>,
    templates: BTreeMap<String, TemplateCases>,
}

#[derive(Deserialize)]
struct TemplateCases {
    tokens: BTreeMap<String, String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
struct Case {
    name: String,
    messages: Vec<ChatMessage>,
    tools: bool,
    add_generation_prompt: bool,
    switches: BTreeMap<String, Value>,
    text: String,
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(format!("{TEMPLATES}/reference.json")).expect("reference.json");
    serde_json::from_str(&text).expect("reference.json parses")
}

fn source(file: &str) -> String {
    std::fs::read_to_string(format!("{TEMPLATES}/{file}")).expect("the template")
}

fn template(file: &str, tokens: &BTreeMap<String, String>) -> ChatTemplate {
    let mut template = ChatTemplate::new(&source(file)).expect("the template compiles");
    for (name, variable) in [("bos_token", "bos_token"), ("eos_token", "eos_token")] {
        template = template.with_token(variable, tokens.get(name).cloned());
    }
    template
}

fn case<'a>(reference: &'a Reference, file: &str, name: &str) -> &'a Case {
    reference.templates[file].cases.iter().find(|c| c.name == name).expect("the case")
}

fn render(reference: &Reference, file: &str, case: &Case) -> String {
    let template = template(file, &reference.templates[file].tokens);
    let options = ChatOptions {
        tools: if case.tools { reference.tools.clone() } else { vec![] },
        switches: case.switches.clone(),
        reply_prefix: None,
    };
    template.render_any(&case.messages, case.add_generation_prompt, &options).unwrap_or_else(|e| panic!("{file} {}: {e}", case.name))
}

#[test]
fn renderings_match_transformers() {
    let reference = reference();
    assert_eq!(reference.templates.len(), 2);
    for (file, cases) in &reference.templates {
        assert!(cases.cases.len() >= 10, "{file}");
        for case in &cases.cases {
            let ours = render(&reference, file, case);
            if ours != case.text {
                let at = ours.chars().zip(case.text.chars()).take_while(|(a, b)| a == b).count();
                let context = |s: &str| s.chars().skip(at.saturating_sub(60)).take(160).collect::<String>();
                panic!("{file} {}: differs at char {at}\nours:   {:?}\nthem:   {:?}", case.name, context(&ours), context(&case.text));
            }
        }
    }
}

#[test]
fn real_templates_imply_their_formats() {
    let qwen = ReplyFormat::detect(Some(&source(QWEN3_5)));
    assert_eq!(qwen.tools, ToolSyntax::QwenXml);
    assert_eq!(qwen.reasoning, Some(Markers { open: "<think>", close: "</think>" }));
    let gemma = ReplyFormat::detect(Some(&source(GEMMA4)));
    assert_eq!(gemma.tools, ToolSyntax::Gemma4);
    assert_eq!(gemma.reasoning, Some(Markers { open: "<|channel>thought", close: "<channel|>" }));
}

#[test]
fn generation_prompts_open_reasoning_only_when_thinking_is_on() {
    let reference = reference();
    let qwen = ReplyFormat::detect(Some(&source(QWEN3_5)));
    let gemma = ReplyFormat::detect(Some(&source(GEMMA4)));
    for (name, qwen_opens) in
        [("tools", true), ("tools_thinking_on", true), ("tools_thinking_off", false), ("results", true), ("results_thinking_off", false)]
    {
        assert_eq!(qwen.starts_in_reasoning(&case(&reference, QWEN3_5, name).text), qwen_opens, "Qwen3.5 {name}");
        // Gemma 4 closes an empty thought channel when thinking is off, and leaves the opening
        // of the channel to the model when it is on.
        assert!(!gemma.starts_in_reasoning(&case(&reference, GEMMA4, name).text), "Gemma 4 {name}");
    }
    assert!(case(&reference, GEMMA4, "tools_thinking_off").text.ends_with("<|turn>model\n<|channel>thought\n<channel|>"));
    assert!(case(&reference, GEMMA4, "tools_thinking_on").text.ends_with("<|turn>model\n"));
    // After tool results the model goes on in the same turn.
    assert!(case(&reference, GEMMA4, "results").text.ends_with("<tool_response|>"));
}

/// The assistant's part of a rendered conversation that ends with its turn (`calls` cases).
fn assistant_part<'a>(file: &str, rendered: &'a str) -> &'a str {
    match file {
        QWEN3_5 => {
            let start = rendered.rfind("<|im_start|>assistant\n").expect("an assistant turn") + "<|im_start|>assistant\n".len();
            rendered[start..].strip_suffix("<|im_end|>\n").expect("the end of the turn")
        }
        _ => {
            let start = rendered.rfind("<|turn>model\n").expect("a model turn") + "<|turn>model\n".len();
            // A turn that ends in calls waits for their results.
            rendered[start..].strip_suffix("<|tool_response>").expect("the turn waits for results")
        }
    }
}

fn parse_every_way(format: ReplyFormat, tools: &[Value], text: &str) -> Vec<ReplyPart> {
    let mut whole = None;
    for step in [1, 3, 7, 10_000] {
        let mut parser = ReplyParser::new(format, false, Some(tools.to_vec()));
        let mut parts: Vec<ReplyPart> = Vec::new();
        let chars: Vec<char> = text.chars().collect();
        for piece in chars.chunks(step) {
            parts.extend(parser.push(&piece.iter().collect::<String>()));
        }
        parts.extend(parser.finish());
        let joined = join(parts);
        match &whole {
            None => whole = Some(joined),
            Some(first) => assert_eq!(&joined, first, "in pieces of {step}"),
        }
    }
    whole.unwrap_or_default()
}

fn join(parts: Vec<ReplyPart>) -> Vec<ReplyPart> {
    let mut out: Vec<ReplyPart> = Vec::new();
    for part in parts {
        match (out.last_mut(), part) {
            (Some(ReplyPart::Content(a)), ReplyPart::Content(b)) | (Some(ReplyPart::Reasoning(a)), ReplyPart::Reasoning(b)) => {
                a.push_str(&b)
            }
            (_, part) => out.push(part),
        }
    }
    out
}

#[test]
fn calls_the_templates_write_parse_back_to_the_same_calls() {
    let reference = reference();
    for file in [QWEN3_5, GEMMA4] {
        let format = ReplyFormat::detect(Some(&source(file)));
        for name in ["calls", "calls_with_text"] {
            let case = case(&reference, file, name);
            let assistant = case.messages.last().expect("the assistant's message");
            let written = assistant_part(file, &case.text);
            let parts = parse_every_way(format, &reference.tools, written);
            let calls: Vec<ParsedCall> =
                parts.iter().filter_map(|p| if let ReplyPart::ToolCall(c) = p { Some(c.clone()) } else { None }).collect();
            let expected: Vec<ParsedCall> =
                assistant.tool_calls.iter().map(|c| ParsedCall { name: c.name.clone(), arguments: c.arguments.clone() }).collect();
            assert_eq!(calls, expected, "{file} {name}: {written:?}");
            let reasoning: String =
                parts.iter().filter_map(|p| if let ReplyPart::Reasoning(r) = p { Some(r.as_str()) } else { None }).collect();
            assert_eq!(reasoning.trim(), assistant.reasoning_content.as_deref().unwrap_or_default(), "{file} {name}");
            let content: String =
                parts.iter().filter_map(|p| if let ReplyPart::Content(t) = p { Some(t.as_str()) } else { None }).collect();
            assert_eq!(content.trim(), assistant.content, "{file} {name}");
        }
    }
}

#[test]
fn python_words_in_earlier_calls_read_back_as_json() {
    // Qwen's template writes a boolean argument with Python's `str` (`True`), a null as
    // `None`; Gemma's writes a null as `None` too.
    let tools = vec![serde_json::json!({"type": "function", "function": {"name": "f", "parameters": {"type": "object", "properties": {
        "on": {"type": "boolean"}, "gone": {"type": ["string", "null"]}, "n": {"type": "number"}, "text": {"type": "string"}}}}})];
    let qwen = ReplyFormat::detect(Some(&source(QWEN3_5)));
    let text = "<tool_call>\n<function=f>\n<parameter=on>\nTrue\n</parameter>\n<parameter=gone>\nNone\n</parameter>\n\
                <parameter=n>\n2.5\n</parameter>\n<parameter=text>\nTrue\n</parameter>\n</function>\n</tool_call>";
    let expected = ParsedCall { name: "f".into(), arguments: serde_json::json!({"on": true, "gone": null, "n": 2.5, "text": "True"}) };
    assert_eq!(parse_every_way(qwen, &tools, text), [ReplyPart::ToolCall(expected)]);
    let gemma = ReplyFormat::detect(Some(&source(GEMMA4)));
    let text = "<|tool_call>call:f{gone:None,n:2.5,on:false,text:<|\"|>None<|\"|>}<tool_call|>";
    let expected = ParsedCall { name: "f".into(), arguments: serde_json::json!({"gone": null, "n": 2.5, "on": false, "text": "None"}) };
    assert_eq!(parse_every_way(gemma, &tools, text), [ReplyPart::ToolCall(expected)]);
}

/// Every real template we hold (these two and the tiny checkpoints' copies of released ones)
/// renders a long chat with tools and calls within a fifth of the template limits' fuel: the
/// headroom `template::TEMPLATE_FUEL` is set with.
#[test]
fn real_templates_render_well_within_the_limits() {
    let reference = reference();
    // 200 messages: the calls-and-results conversation again and again, each text 2 KB long.
    let pad = |text: &str| format!("{text} {}", "lorem ipsum dolor sit amet ".repeat(76));
    let turn = &case(&reference, QWEN3_5, "next_question").messages;
    let mut messages = vec![turn[0].clone()];
    while messages.len() < 200 {
        for message in &turn[1..] {
            let mut message = message.clone();
            message.content = pad(&message.content);
            message.reasoning_content = message.reasoning_content.as_deref().map(pad);
            messages.push(message);
        }
    }
    let options = ChatOptions {
        tools: reference.tools.clone(),
        switches: [("enable_thinking".to_string(), Value::Bool(true))].into(),
        reply_prefix: None,
    };
    let tiny = std::path::Path::new(TEMPLATES).join("../tiny");
    let mut sources = vec![(QWEN3_5.to_string(), source(QWEN3_5)), (GEMMA4.to_string(), source(GEMMA4))];
    for folder in std::fs::read_dir(&tiny).unwrap().flatten().map(|e| e.path()) {
        if let Ok(text) = std::fs::read_to_string(folder.join("chat_template.jinja")) {
            sources.push((folder.display().to_string(), text));
        }
        let config =
            std::fs::read_to_string(folder.join("tokenizer_config.json")).ok().and_then(|t| serde_json::from_str::<Value>(&t).ok());
        if let Some(text) = config.as_ref().and_then(|c| c["chat_template"].as_str()) {
            sources.push((folder.display().to_string(), text.to_string()));
        }
    }
    assert!(sources.len() > 10);
    let mut most = 0;
    for (name, source) in &sources {
        let template =
            ChatTemplate::new(source).unwrap().with_token("bos_token", Some("<s>".into())).with_token("eos_token", Some("</s>".into()));
        match template.render_messages_measured(&messages, true, &options) {
            Ok((text, fuel)) => {
                assert!(text.len() > 200 * 1000, "{name}");
                most = most.max(fuel);
            }
            // Templates that refuse this chat (roles that must alternate) still must not reach a limit.
            Err(e) => assert!(!e.to_string().contains("limit of"), "{name}: {e}"),
        }
    }
    println!("the most fuel a real template took: {most}");
    assert!(most > 0 && most * 5 < super::template::TEMPLATE_FUEL, "{most}");
}
