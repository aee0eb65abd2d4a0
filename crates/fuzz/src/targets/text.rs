//! Text a model or its files bring: chat templates, replies (reasoning and calls of tools, read
//! while they stream) and the constraints that become llguidance grammars.

use std::sync::OnceLock;

use confab_engine::constraint::{Constraint, Grammars};
use confab_engine::text::{Markers, ToolSyntax};
use confab_engine::{ChatMessage, ChatOptions, ChatTemplate, ReplyFormat, ReplyParser, Tokenizer, ToolCall};
use serde_json::{json, Value};

/// The tool definitions requests carry in the tests (a city's weather, a web search).
fn tools() -> &'static Vec<Value> {
    static TOOLS: OnceLock<Vec<Value>> = OnceLock::new();
    TOOLS.get_or_init(|| {
        let path = crate::repository_root().join("tests/reference/fixtures/templates/reference.json");
        let reference: Value = std::fs::read(path).ok().and_then(|b| serde_json::from_slice(&b).ok()).unwrap_or_default();
        reference["tools"].as_array().cloned().unwrap_or_default()
    })
}

/// A model's chat template (from its tokenizer_config.json, chat_template.jinja or GGUF),
/// compiled and rendered as a chat renders it: a plain chat, one with tools, calls and results,
/// a continuation and a prompt that ends in the opening of a call. The template limits
/// (`TEMPLATE_FUEL`, ...) keep a runaway one short.
pub fn chat_template(data: &[u8]) {
    let source = String::from_utf8_lossy(data);
    let Ok(template) = ChatTemplate::new(&source) else { return };
    let template = template.with_token("bos_token", Some("<s>".into())).with_token("eos_token", Some("</s>".into()));
    let mut call = ChatMessage::assistant("");
    call.tool_calls.push(ToolCall { id: "call_1".into(), name: "get_weather".into(), arguments: json!({"city": "Paris", "days": 3}) });
    call.reasoning_content = Some("The weather, then.".into());
    let mut result = ChatMessage::new("tool", "Sunny, 21 C.");
    result.tool_call_id = Some("call_1".into());
    let chat = [ChatMessage::system("Be brief."), ChatMessage::user("Weather in Paris?"), call, result, ChatMessage::assistant("Sunny.")];
    let _ = template.render(&chat[..2], true, None);
    let options = ChatOptions {
        tools: tools().clone(),
        switches: [("enable_thinking".to_string(), Value::Bool(true))].into(),
        reply_prefix: Some("<tool_call>".into()),
    };
    let _ = template.render_prompt(&chat[..], "", confab_engine::text::PromptEnd::NewReply, &options);
    let _ = template.render_continuation(&chat);
}

/// Every reasoning markup `ReplyFormat::detect` knows, and none.
const REASONING: [Option<Markers>; 4] = [
    None,
    Some(Markers { open: "<think>", close: "</think>" }),
    Some(Markers { open: "<|channel>thought", close: "<channel|>" }),
    Some(Markers { open: "[THINK]", close: "[/THINK]" }),
];

/// A streamed reply read by `ReplyParser`, as the app and the server read replies. The first
/// byte picks the call syntax, the reasoning markup and whether the prompt left the reply in
/// reasoning; the second, whether the request has tools and how the text is cut into the pieces
/// it arrives in; the rest is the reply.
pub fn reply_parser(data: &[u8]) {
    let [format, cuts, text @ ..] = data else { return };
    let syntax = ToolSyntax::ALL[*format as usize % ToolSyntax::ALL.len()];
    let reasoning = REASONING[(*format as usize / 8) % REASONING.len()];
    let in_reasoning = format & 0x80 != 0;
    let request_tools = (cuts & 1 == 1).then(|| tools().clone());
    let text = String::from_utf8_lossy(text);
    let reply_format = ReplyFormat { reasoning, tools: syntax };
    let mut parser = ReplyParser::new(reply_format, in_reasoning, request_tools);
    // Pieces of 1 to 16 bytes (at character boundaries), in a pattern the second byte seeds.
    let mut rng = crate::mutate::Rng::new(u64::from(*cuts) + 1);
    let mut rest: &str = &text;
    while !rest.is_empty() {
        let mut at = (1 + rng.below(16)).min(rest.len());
        while !rest.is_char_boundary(at) {
            at += 1;
        }
        let (piece, after) = rest.split_at(at);
        let _ = parser.push(piece);
        rest = after;
    }
    let _ = parser.finish();
    let _ = reply_format.starts_in_reasoning(&text);
    let _ = reply_format.call_grammar(tools(), &[]);
}

/// The grammars of one vocabulary (the tiny Qwen3 checkpoint's), built once.
fn grammars() -> &'static Grammars {
    static GRAMMARS: OnceLock<Grammars> = OnceLock::new();
    GRAMMARS.get_or_init(|| {
        // The tokenizer and its config (which names the end-of-sequence token).
        let folder = crate::repository_root().join("tests/reference/fixtures/tiny/qwen3");
        let json = std::fs::read(folder.join("tokenizer.json")).expect("the tokenizer");
        let (_dir, path) = crate::as_file("tokenizer.json", &json);
        let config = std::fs::read(folder.join("tokenizer_config.json")).expect("the tokenizer's config");
        std::fs::write(path.with_file_name("tokenizer_config.json"), config).expect("a temporary file");
        let tokenizer = Tokenizer::from_hf_folder(path.parent().expect("a folder")).expect("the tokenizer loads");
        let eos: Vec<u32> = tokenizer.eos_id().into_iter().collect();
        Grammars::new(&tokenizer, tokenizer.vocab_size(), &eos).expect("the grammar vocabulary")
    })
}

/// A request's constraint compiled into a grammar, as the engine does before decoding: a JSON
/// Schema, a regular expression or a Lark grammar (the first byte says which), then the first
/// masks, following the lowest allowed token a few steps.
pub fn constraint(data: &[u8]) {
    let [kind, text @ ..] = data else { return };
    let text = String::from_utf8_lossy(text).into_owned();
    let constraint = match kind % 3 {
        0 => match serde_json::from_str(&text) {
            Ok(schema) => Constraint::JsonSchema(schema),
            Err(_) => return,
        },
        1 => Constraint::Regex(text),
        _ => Constraint::Lark(text),
    };
    let Ok(mut guide) = grammars().guide(&constraint) else { return };
    for _ in 0..4 {
        let Ok(mask) = guide.mask() else { return };
        let forced = guide.forced();
        let next = forced.first().copied().or_else(|| mask.allowed().first().copied());
        match next {
            Some(token) if guide.consume(token).is_ok() && !guide.finished() => {}
            _ => return,
        }
    }
}
