//! Protocols: the local server's request bodies (one target per API door, from bytes through the
//! handler's parse and its translation into the engine's request), the JSON-RPC lines MCP servers
//! send, and remote providers' event streams and answers.

use confab_engine::model::format::Format;
use confab_engine::text::ToolSyntax;
use confab_engine::{ModelId, ModelInfo, ReplyFormat};
use confab_server::ServedModel;

/// The model a request is translated for, and the body. An input that starts with `{` is the
/// body, for a model that reads everything (images, audio, video; thinking, effort; Hermes
/// calls): seeds are plain JSON. Otherwise its first two bytes are the model's facts and the rest
/// is the body: bits 0-6 of the first say whether it reads images, audio and video, has the
/// thinking switch, the effort, a reasoning block and a draft model; the second picks its call
/// syntax.
fn model_and_body(data: &[u8]) -> (ServedModel, &[u8]) {
    match data {
        [b'{', ..] | [] | [_] => (served_model(0x7f, 4), data),
        [flags, syntax, body @ ..] => (served_model(*flags, *syntax), body),
    }
}

fn served_model(flags: u8, syntax: u8) -> ServedModel {
    let bit = |n: u8| flags & (1 << n) != 0;
    let mut reply_format = ReplyFormat::detect(Some(if bit(5) { "<think></think>" } else { "" }));
    reply_format.tools = ToolSyntax::ALL[syntax as usize % ToolSyntax::ALL.len()];
    let info = ModelInfo {
        name: "fuzz".into(),
        path: "/models/fuzz".into(),
        architecture: "qwen3".into(),
        format: Format::Safetensors,
        dtype: "bfloat16".into(),
        quantized: false,
        context_length: 4096,
        vocab_size: 32_000,
        fingerprint: String::new(),
        parameters: 0,
        weights_bytes: 0,
        kv_quantization: None,
        kv_quantization_declined: None,
        default_sampling: Default::default(),
        vision: bit(0),
        audio: bit(1),
        video: bit(2),
        reply_format,
        markup_tokens: Vec::new(),
        thinking_switch: bit(3),
        reasoning_effort: bit(4),
        embedding: None,
        denoising: None,
    };
    ServedModel::new(ModelId(1), "fuzz".into(), info, bit(6).then_some(ModelId(2)))
}

/// An embedding model's vector length, from the first byte where the input does not start with
/// `{` (as `model_and_body`).
fn dimensions_and_body(data: &[u8]) -> (usize, &[u8]) {
    match data {
        [b'{', ..] | [] => (1024, data),
        [length, body @ ..] => (*length as usize * 16, body),
    }
}

pub fn chat_completions(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::chat_completions(body, &model);
}

pub fn completions(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::completions(body, &model);
}

pub fn responses(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::responses(body, &model);
}

pub fn messages(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::messages(body, &model);
}

pub fn embeddings(data: &[u8]) {
    let (dimensions, body) = dimensions_and_body(data);
    let _ = confab_server::fuzzing::embeddings(body, dimensions);
}

pub fn ollama_chat(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::ollama_chat(body, &model);
}

pub fn ollama_generate(data: &[u8]) {
    let (model, body) = model_and_body(data);
    let _ = confab_server::fuzzing::ollama_generate(body, &model);
}

pub fn ollama_embed(data: &[u8]) {
    let (dimensions, body) = dimensions_and_body(data);
    let _ = confab_server::fuzzing::ollama_embed(body, dimensions);
}

/// One line an MCP server sends (the transport splits at newlines).
pub fn mcp_message(data: &[u8]) {
    let _ = confab_mcp::fuzzing::server_line(data);
}

/// The `mcpServers` JSON (or JSONC) other MCP hosts write, pasted into the settings.
pub fn mcp_servers_json(data: &[u8]) {
    if let Ok(text) = std::str::from_utf8(data) {
        let _ = confab_mcp::import_servers(text);
    }
}

/// A chat stream's body in pieces of the size the first byte gives (0: one piece), read as a live
/// stream reads it; what it yields must not depend on where the body was cut.
pub fn remote_sse(data: &[u8]) {
    let Some((&size, body)) = data.split_first() else { return };
    let chunked = if size == 0 {
        confab_remote::fuzzing::chat_stream([body])
    } else {
        confab_remote::fuzzing::chat_stream(body.chunks(size as usize))
    };
    let whole = confab_remote::fuzzing::chat_stream([body]);
    assert_eq!(outline(&chunked), outline(&whole), "the stream's events depend on how its body was cut");
}

/// What a stream gave, without its timings.
fn outline(events: &[Result<confab_remote::ChatEvent, confab_remote::RemoteError>]) -> Vec<String> {
    use confab_remote::ChatEvent;
    events
        .iter()
        .map(|event| match event {
            Ok(ChatEvent::Finished(finished)) => format!("finished {:?} {:?} {}", finished.reason, finished.usage, finished.pieces),
            Ok(other) => format!("{other:?}"),
            Err(error) => format!("error {error}"),
        })
        .collect()
}

/// A provider's `GET /models` answer, or (first byte odd) an error answer: a status, a
/// `Retry-After` value up to the first newline, and the body.
pub fn remote_answer(data: &[u8]) {
    let Some((&first, rest)) = data.split_first() else { return };
    let text = String::from_utf8_lossy(rest);
    if first % 2 == 0 {
        let _ = confab_remote::fuzzing::models(&text);
    } else {
        let (retry_after, body) = text.split_once('\n').unwrap_or((&text, ""));
        let status = 400 + (first as u16) * 2 % 200;
        let error = confab_remote::fuzzing::error_answer(status, retry_after, body);
        let _ = (error.to_string(), error.keeps_partial_reply());
    }
}
