//! confab-remote, the app's provider client, against the real `confab serve`: the default model
//! (SmolLM2-135M-Instruct) behind an API key, the tiny Gemma 4 fixture for an image, and the tiny
//! Qwen3 fixture for tool calls (forced through the server's grammar, whatever its weights say).
//! The fault cases live beside the client, against a stub (crates/remote/tests/faults.rs).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use confab_remote::{ChatEvent, ChatRequest, Client, Finished, Message, Part, RemoteError, RemoteToolCall, Sampling};

const KEY: &str = "sk-confab-remote-test";

/// `confab serve` on a free port, with a data folder of its own (its history is not the
/// user's: a branch's schema must not reach the real one); killed when dropped.
struct Serve {
    child: Child,
    model: String,
    base_url: String,
    _home: tempfile::TempDir,
}

impl Serve {
    /// `args` name the model (`--model`): the fresh data folder has none.
    fn start(args: &[&str]) -> Serve {
        let home = tempfile::tempdir().unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_confab"))
            .args(["serve", "--port", "0", "--no-prefix-cache", "--no-encoder-cache"])
            .args(args)
            .env("CONFAB_HOME", home.path())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run confab serve");
        // Printed once the model is loaded and the port is open.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let model = line.split('`').nth(1).unwrap_or_else(|| panic!("confab serve did not start: {line:?}")).to_string();
        let base_url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("the URL").to_string();
        Serve { child, model, base_url, _home: home }
    }

    /// `GET /health`'s count of running requests (plain HTTP: no client needed for that).
    fn active_requests(&self) -> u64 {
        let address = self.base_url.trim_start_matches("http://").trim_end_matches("/v1");
        let mut socket = std::net::TcpStream::connect(address).unwrap();
        write!(socket, "GET /health HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        socket.read_to_string(&mut answer).unwrap();
        let body: serde_json::Value = serde_json::from_str(&answer[answer.find("\r\n\r\n").unwrap() + 4..]).unwrap();
        body["active_requests"].as_u64().unwrap()
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn default_model() -> PathBuf {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../../assets/default-model.json")).unwrap(),
    )
    .unwrap();
    let paths = confab_paths::AppPaths::from_env();
    paths.models_dir.join(manifest["folder"].as_str().unwrap()).join(manifest["file"].as_str().unwrap())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(1).build().unwrap()
}

fn request(model: &str, parts: Vec<Part>, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages: vec![Message::text("system", "Be brief."), Message::new("user", parts)],
        sampling: Sampling { temperature: Some(0.0), max_tokens: Some(max_tokens), top_k: Some(0), ..Sampling::default() },
        tools: Vec::new(),
        tool_choice: None,
    }
}

/// Streams a whole reply: its text and how it finished.
async fn reply(client: &Client, request: &ChatRequest) -> Result<(String, Finished), RemoteError> {
    let (text, calls, finished) = reply_with_calls(client, request).await?;
    assert!(calls.is_empty(), "no tools were offered, yet the model called {calls:?}");
    Ok((text, finished))
}

/// Streams a whole reply: its text, the tool calls it asked for, and how it finished.
async fn reply_with_calls(client: &Client, request: &ChatRequest) -> Result<(String, Vec<RemoteToolCall>, Finished), RemoteError> {
    let mut stream = client.chat(request).await?;
    let (mut text, mut calls) = (String::new(), Vec::new());
    while let Some(event) = stream.next().await {
        match event? {
            ChatEvent::Text(piece) => text.push_str(&piece),
            ChatEvent::ToolCalls(asked) => {
                assert!(calls.is_empty(), "the calls come once");
                calls = asked;
            }
            ChatEvent::Finished(finished) => return Ok((text, calls, finished)),
        }
    }
    unreachable!("a stream ends with Finished or an error")
}

#[test]
fn the_default_model_through_confab_serve() {
    let model = default_model();
    assert!(model.is_file(), "the default model is not installed at {}; run scripts/setup.sh", model.display());
    let server = Serve::start(&["--model", model.to_str().unwrap(), "--api-key", KEY]);
    runtime().block_on(async {
        let client = Client::new(&server.base_url, Some(KEY)).unwrap();
        let models = client.models().await.unwrap();
        assert_eq!(models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), [server.model.as_str()]);
        assert_eq!(models[0].inputs, None, "confab serve does not list input kinds: the user says");

        let ask = request(&server.model, vec![Part::Text("What is the capital of France?".into())], 12);
        let (text, finished) = reply(&client, &ask).await.unwrap();
        assert!(text.contains("Paris"), "{text:?}");
        let usage = finished.usage.expect("usage, asked for with stream_options");
        assert!(usage.prompt_tokens > 10 && usage.completion_tokens > 0, "{usage:?}");
        assert_eq!(finished.generated_tokens(), usage.completion_tokens);
        assert!(finished.time_to_first_text.is_some());
        // Greedy: the same question, the same answer (the server's own determinism, seen
        // through the client: nothing lost or doubled between the pieces).
        assert_eq!(reply(&client, &ask).await.unwrap().0, text);

        // A wrong key: the server's 401, as the error that says where to fix it.
        let wrong = Client::new(&server.base_url, Some("sk-wrong")).unwrap();
        let error = wrong.models().await.unwrap_err();
        assert!(matches!(error, RemoteError::Unauthorized { status: 401, .. }), "{error:?}");
        assert!(!error.to_string().contains("sk-wrong"), "{error}");
        // An unknown model: the server's 404, with its message.
        let error = reply(&client, &request("no-such-model", vec![Part::Text("Hi".into())], 2)).await.unwrap_err();
        assert!(matches!(error, RemoteError::Rejected { status: 404, .. }), "{error:?}");

        // Stop: dropping the stream ends the server's generation.
        let long = request(&server.model, vec![Part::Text("Count from one to two hundred in words.".into())], 400);
        let mut stream = client.chat(&long).await.unwrap();
        for _ in 0..2 {
            assert!(matches!(stream.next().await, Some(Ok(ChatEvent::Text(_)))));
        }
        assert_eq!(server.active_requests(), 1);
        drop(stream);
        let deadline = Instant::now() + Duration::from_secs(60);
        while server.active_requests() != 0 {
            assert!(Instant::now() < deadline, "the server still generates after the client closed its stream");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    });
}

#[test]
fn an_image_reaches_a_remote_model_that_reads_images() {
    let gemma4 = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/gemma4");
    let server = Serve::start(&["--model", gemma4.to_str().unwrap()]);
    let png = std::fs::read(gemma4.join("media/gradient.png")).unwrap();
    runtime().block_on(async {
        let client = Client::new(&server.base_url, None).unwrap();
        let text_only = request(&server.model, vec![Part::Text("What is this?".into())], 2);
        let with_image =
            request(&server.model, vec![Part::Text("What is this?".into()), Part::Image { mime: "image/png".into(), bytes: png }], 2);
        let prompt = |finished: &Finished| finished.usage.unwrap().prompt_tokens;
        let without = prompt(&reply(&client, &text_only).await.unwrap().1);
        let with = prompt(&reply(&client, &with_image).await.unwrap().1);
        // The image's soft tokens (63 for this picture, as `confab generate` reports them) and
        // the tokens around them.
        assert!(with >= without + 63, "prompt tokens without the image {without}, with it {with}");
    });
}

#[test]
fn tool_calls_go_to_a_remote_model_and_their_results_back() {
    // A copy of the tiny Qwen3 with room for the tools' instructions (its 256 positions are too
    // few; its weights are random anyway).
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/reference/fixtures/tiny/qwen3");
    let folder = tempfile::tempdir().unwrap();
    for entry in std::fs::read_dir(&fixture).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), folder.path().join(entry.file_name())).unwrap();
    }
    let config_path = folder.path().join("config.json");
    let mut config: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&config_path).unwrap()).unwrap();
    config["max_position_embeddings"] = serde_json::json!(2048);
    std::fs::write(&config_path, config.to_string()).unwrap();
    let server = Serve::start(&["--model", folder.path().to_str().unwrap()]);
    let weather = serde_json::json!({ "type": "function", "function": { "name": "get_weather", "description": "The weather in a city today.",
        "parameters": { "type": "object", "properties": { "city": { "type": "string", "maxLength": 8 } }, "required": ["city"], "additionalProperties": false } } });
    let clock = serde_json::json!({ "type": "function", "function": { "name": "get_time", "description": "The time now.",
        "parameters": { "type": "object", "properties": {}, "additionalProperties": false } } });
    runtime().block_on(async {
        let client = Client::new(&server.base_url, None).unwrap();
        let mut ask = request(&server.model, vec![Part::Text("What time is it?".into())], 64);
        ask.tools = vec![weather, clock];
        // The tiny model's weights are random: only the grammar makes it call a tool.
        ask.tool_choice = Some(serde_json::json!({ "type": "function", "function": { "name": "get_time" } }));
        let (_, calls, finished) = reply_with_calls(&client, &ask).await.unwrap();
        assert_eq!(finished.reason.as_deref(), Some("tool_calls"));
        assert_eq!(calls.len(), 1, "{calls:?}");
        assert_eq!((calls[0].name.as_str(), calls[0].arguments.as_str()), ("get_time", "{}"));
        assert!(calls[0].id.starts_with("call_"), "{calls:?}");

        ask.tool_choice = Some(serde_json::json!("required"));
        let (_, required, finished) = reply_with_calls(&client, &ask).await.unwrap();
        assert_eq!(finished.reason.as_deref(), Some("tool_calls"));
        assert!(!required.is_empty() && required.iter().all(|c| ["get_weather", "get_time"].contains(&c.name.as_str())), "{required:?}");
        for call in &required {
            let arguments: serde_json::Value = serde_json::from_str(&call.arguments).unwrap_or_else(|e| panic!("{call:?}: {e}"));
            assert!(arguments.is_object(), "{call:?}");
        }

        // The call and its result go back through the template: the same request with them
        // added is a longer prompt (the same tools shown), and the model may answer in text.
        let asked = finished.usage.unwrap().prompt_tokens;
        ask.messages.push(Message::assistant_calls("", required.clone()));
        for call in &required {
            ask.messages.push(Message::tool_result(&call.id, "It is 14:05."));
        }
        ask.tool_choice = Some(serde_json::json!("auto"));
        ask.sampling.max_tokens = Some(4);
        let (_, after, finished) = reply_with_calls(&client, &ask).await.unwrap();
        assert!(after.is_empty() && finished.reason.as_deref() != Some("tool_calls"), "{after:?} {finished:?}");
        let answered = finished.usage.unwrap().prompt_tokens;
        assert!(answered > asked + 5, "prompt tokens: asking {asked}, with the calls and their results {answered}");
    });
}
