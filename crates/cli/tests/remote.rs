//! confab-remote, the app's provider client, against the real `confab serve`: the default model
//! (SmolLM2-135M-Instruct) behind an API key, and the tiny Gemma 4 fixture for an image.
//! The fault cases live beside the client, against a stub (crates/remote/tests/faults.rs).

use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use confab_remote::{ChatEvent, ChatRequest, Client, Finished, Message, Part, RemoteError, Sampling};

const KEY: &str = "sk-confab-remote-test";

/// `confab serve` on a free port; killed when dropped.
struct Serve {
    child: Child,
    model: String,
    base_url: String,
}

impl Serve {
    fn start(args: &[&str]) -> Serve {
        let mut child = Command::new(env!("CARGO_BIN_EXE_confab"))
            .args(["serve", "--port", "0", "--no-prefix-cache", "--no-encoder-cache"])
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("run confab serve");
        // Printed once the model is loaded and the port is open.
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
        let model = line.split('`').nth(1).unwrap_or_else(|| panic!("confab serve did not start: {line:?}")).to_string();
        let base_url = line.split_whitespace().find(|w| w.starts_with("http://")).expect("the URL").to_string();
        Serve { child, model, base_url }
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
    let paths = confab_engine::AppPaths::from_env();
    paths.models_dir.join(manifest["folder"].as_str().unwrap()).join(manifest["file"].as_str().unwrap())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().enable_all().worker_threads(1).build().unwrap()
}

fn request(model: &str, parts: Vec<Part>, max_tokens: u32) -> ChatRequest {
    ChatRequest {
        model: model.into(),
        messages: vec![Message::text("system", "Be brief."), Message { role: "user".into(), parts }],
        sampling: Sampling { temperature: Some(0.0), max_tokens: Some(max_tokens), top_k: Some(0), ..Sampling::default() },
    }
}

/// Streams a whole reply: its text and how it finished.
async fn reply(client: &Client, request: &ChatRequest) -> Result<(String, Finished), RemoteError> {
    let mut stream = client.chat(request).await?;
    let mut text = String::new();
    while let Some(event) = stream.next().await {
        match event? {
            ChatEvent::Text(piece) => text.push_str(&piece),
            ChatEvent::Finished(finished) => return Ok((text, finished)),
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
