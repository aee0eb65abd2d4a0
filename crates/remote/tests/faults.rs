//! The client against a fault-injecting stub server on loopback: each failure a provider can
//! cause (unreachable host, TLS, 401, 429 with Retry-After, 5xx, a stream cut mid-reply, a
//! malformed event, an error event, silence) must come back as its error, with the text that
//! arrived before it kept; and Stop (dropping the stream) must close the connection.
//!
//! The stub speaks raw HTTP/1.1 over a TcpListener, so it can misbehave in ways a real server
//! library would not let it.

use std::time::Duration;

use confab_remote::{ChatEvent, ChatRequest, Client, Message, Part, RemoteError, RemoteToolCall, Sampling};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::oneshot;

const KEY: &str = "sk-stub-key-4242";

/// What the stub does after reading a request: write these pieces (pausing between them),
/// then close.
struct Script {
    pieces: Vec<Vec<u8>>,
    pause: Duration,
}

fn script(pieces: &[&str]) -> Script {
    Script { pieces: pieces.iter().map(|p| p.as_bytes().to_vec()).collect(), pause: Duration::from_millis(5) }
}

fn sse_head() -> &'static str {
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
}

fn chunk(text: &str) -> String {
    format!("data: {}\n\n", serde_json::json!({ "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }] }))
}

/// Reads one request (head and Content-Length body) and returns it as text.
async fn read_request(socket: &mut TcpStream) -> String {
    let mut data = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = socket.read(&mut buf).await.unwrap_or(0);
        if n == 0 {
            break;
        }
        data.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&data).to_string();
        if let Some(head_end) = text.find("\r\n\r\n") {
            let length = text[..head_end]
                .lines()
                .find_map(|l| l.to_ascii_lowercase().strip_prefix("content-length:").map(|v| v.trim().parse::<usize>().unwrap_or(0)))
                .unwrap_or(0);
            if data.len() >= head_end + 4 + length {
                return text;
            }
        }
    }
    String::from_utf8_lossy(&data).to_string()
}

/// Serves one connection with `script`; returns the base URL and the request it received.
async fn stub(script: Script) -> (String, oneshot::Receiver<String>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (tx, rx) = oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let request = read_request(&mut socket).await;
        let _ = tx.send(request);
        for piece in script.pieces {
            if socket.write_all(&piece).await.is_err() {
                return;
            }
            let _ = socket.flush().await;
            tokio::time::sleep(script.pause).await;
        }
    });
    (base, rx)
}

fn hello() -> ChatRequest {
    ChatRequest {
        model: "stub-model".into(),
        messages: vec![Message::text("user", "Hello")],
        sampling: Sampling { temperature: Some(0.0), max_tokens: Some(8), ..Sampling::default() },
        tools: Vec::new(),
        tool_choice: None,
    }
}

/// Runs a chat against `base`; returns the texts received and how it ended.
async fn run(base: &str) -> (Vec<String>, Result<ChatEvent, RemoteError>) {
    let client = Client::new(base, Some(KEY)).unwrap();
    let mut stream = match client.chat(&hello()).await {
        Ok(stream) => stream,
        Err(e) => return (vec![], Err(e)),
    };
    let mut texts = vec![];
    while let Some(event) = stream.next().await {
        match event {
            Ok(ChatEvent::Text(t)) => texts.push(t),
            Ok(ChatEvent::ToolCalls(calls)) => panic!("no tools were offered, yet the model called {calls:?}"),
            other => {
                assert!(stream.next().await.is_none(), "nothing follows the end");
                return (texts, other);
            }
        }
    }
    panic!("the stream ended without Finished or an error");
}

fn assert_no_key(error: &RemoteError) {
    assert!(!error.to_string().contains(KEY), "the key leaked into: {error}");
    assert!(!format!("{error:?}").contains(KEY), "the key leaked into: {error:?}");
}

#[tokio::test]
async fn a_streamed_reply_arrives_in_pieces_with_its_usage() {
    let usage = r#"data: {"choices":[],"usage":{"prompt_tokens":9,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":4}}}"#;
    let body = [
        sse_head().to_string(),
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"}}]}\n\n".into(),
        ": keep-alive\n\n".into(),
        chunk("Hel"),
        // One event split across two writes, and two events in one write.
        chunk("lo")[..10].to_string(),
        chunk("lo")[10..].to_string() + &chunk("!"),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n".into(),
        format!("{usage}\n\ndata: [DONE]\n\n"),
    ];
    let (base, request) = stub(script(&body.iter().map(String::as_str).collect::<Vec<_>>())).await;
    let (texts, end) = run(&base).await;
    assert_eq!(texts, ["Hel", "lo", "!"]);
    let ChatEvent::Finished(finished) = end.unwrap() else { panic!("not finished") };
    assert_eq!(finished.reason.as_deref(), Some("stop"));
    let usage = finished.usage.unwrap();
    assert_eq!((usage.prompt_tokens, usage.completion_tokens, usage.cached_tokens), (9, 3, Some(4)));
    assert_eq!(finished.generated_tokens(), 3);

    let sent = request.await.unwrap();
    assert!(sent.starts_with("POST /v1/chat/completions HTTP/1.1"), "{sent}");
    assert!(sent.contains(&format!("authorization: Bearer {KEY}")), "{sent}");
    let body: serde_json::Value = serde_json::from_str(&sent[sent.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!((body["model"].as_str(), body["stream"].as_bool(), body["max_tokens"].as_u64()), (Some("stub-model"), Some(true), Some(8)));
}

#[tokio::test]
async fn an_image_and_a_clip_go_as_content_parts() {
    let (base, request) = stub(script(&[sse_head(), "data: [DONE]\n\n"])).await;
    let client = Client::new(&base, None).unwrap();
    let mut chat = hello();
    chat.messages = vec![Message::new(
        "user",
        vec![
            Part::Text("Describe".into()),
            Part::Image { mime: "image/jpeg".into(), bytes: vec![0xff, 0xd8] },
            Part::Audio { format: "wav".into(), bytes: b"RIFF".to_vec() },
        ],
    )];
    let mut stream = client.chat(&chat).await.unwrap();
    while stream.next().await.is_some() {}
    let sent = request.await.unwrap();
    assert!(!sent.to_ascii_lowercase().contains("authorization"), "no key, no header");
    let body: serde_json::Value = serde_json::from_str(&sent[sent.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    let parts = &body["messages"][0]["content"];
    assert_eq!(parts[1]["image_url"]["url"], "data:image/jpeg;base64,/9g=");
    assert_eq!(parts[2]["input_audio"], serde_json::json!({ "data": "UklGRg==", "format": "wav" }));
}

#[tokio::test]
async fn an_unreachable_host_says_so() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    drop(listener); // nothing listens there now
    let (_, end) = run(&format!("http://{address}/v1")).await;
    let error = end.unwrap_err();
    assert!(matches!(error, RemoteError::Unreachable { .. }), "{error:?}");
    assert!(error.to_string().contains(&format!("Could not reach http://{address}")), "{error}");
    assert!(error.to_string().to_lowercase().contains("refused"), "{error}");
}

#[tokio::test]
async fn a_tls_failure_says_so() {
    // https:// to a server that answers in plain HTTP: the handshake fails.
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let address = listener.local_addr().unwrap();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        let _ = socket.write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n").await;
        tokio::time::sleep(Duration::from_millis(200)).await;
    });
    let (_, end) = run(&format!("https://{address}/v1")).await;
    let error = end.unwrap_err();
    assert!(matches!(error, RemoteError::Tls { .. }), "{error:?}");
    assert!(error.to_string().contains("use an http:// URL"), "{error}");
}

#[tokio::test]
async fn a_refused_key_says_where_to_fix_it() {
    let body = r#"{"error":{"message":"Incorrect API key provided.","type":"invalid_request_error","code":"invalid_api_key"}}"#;
    let (base, _) =
        stub(script(&[&format!("HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len())])).await;
    let error = run(&base).await.1.unwrap_err();
    assert!(matches!(error, RemoteError::Unauthorized { status: 401, .. }), "{error:?}");
    assert!(error.to_string().contains("Incorrect API key provided.") && error.to_string().contains("Check the API key"), "{error}");
    assert_no_key(&error);
}

#[tokio::test]
async fn a_rate_limit_says_when_to_retry() {
    let body = r#"{"error":{"message":"Rate limit reached"}}"#;
    let head =
        format!("HTTP/1.1 429 Too Many Requests\r\nRetry-After: 12\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}", body.len());
    let (base, _) = stub(script(&[&head])).await;
    let error = run(&base).await.1.unwrap_err();
    assert!(matches!(error, RemoteError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(12)), "{error:?}");
    assert!(error.to_string().contains("try again in 12 s: Rate limit reached"), "{error}");
}

#[tokio::test]
async fn a_server_error_says_so() {
    let (base, _) =
        stub(script(&["HTTP/1.1 503 Service Unavailable\r\nContent-Length: 19\r\nConnection: close\r\n\r\nengine is restarting"])).await;
    let error = run(&base).await.1.unwrap_err();
    assert!(matches!(error, RemoteError::Server { status: 503, .. }), "{error:?}");
    assert!(error.to_string().contains("server error (HTTP 503)"), "{error}");
}

#[tokio::test]
async fn a_stream_cut_mid_reply_keeps_what_arrived() {
    let (base, _) = stub(script(&[sse_head(), &chunk("The answer"), &chunk(" is")])).await;
    let (texts, end) = run(&base).await;
    assert_eq!(texts.concat(), "The answer is");
    let error = end.unwrap_err();
    assert!(matches!(error, RemoteError::Interrupted { .. }) && error.keeps_partial_reply(), "{error:?}");
    assert!(error.to_string().contains("The text received so far is kept"), "{error}");
}

#[tokio::test]
async fn a_malformed_event_is_an_error_after_the_text_before_it() {
    let (base, _) = stub(script(&[sse_head(), &chunk("Partial"), "data: {\"choices\": [oops\n\n", &chunk("never")])).await;
    let (texts, end) = run(&base).await;
    assert_eq!(texts, ["Partial"]);
    let error = end.unwrap_err();
    assert!(matches!(error, RemoteError::Malformed { .. }) && error.keeps_partial_reply(), "{error:?}");
    assert!(error.to_string().contains("not JSON"), "{error}");
}

#[tokio::test]
async fn an_error_event_mid_stream_is_reported() {
    let (base, _) = stub(script(&[sse_head(), &chunk("Half"), "data: {\"error\":{\"message\":\"out of KV cache\"}}\n\n"])).await;
    let (texts, end) = run(&base).await;
    assert_eq!(texts, ["Half"]);
    let error = end.unwrap_err();
    assert!(matches!(&error, RemoteError::InStream { message, .. } if message == "out of KV cache"), "{error:?}");
}

#[tokio::test]
async fn a_silent_server_times_out_with_the_text_kept() {
    let mut silent = script(&[&(sse_head().to_string() + &chunk("Slow")), &chunk("never")]);
    silent.pause = Duration::from_secs(5);
    let (base, _) = stub(silent).await;
    let client = Client::with_read_timeout(&base, None, Duration::from_millis(300)).unwrap();
    let mut stream = client.chat(&hello()).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), ChatEvent::Text("Slow".into()));
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(error, RemoteError::Interrupted { .. }), "{error:?}");
    assert!(error.to_string().contains("no data for 0.3 s"), "{error}");
}

#[tokio::test]
async fn dropping_the_stream_closes_the_connection() {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}/v1", listener.local_addr().unwrap());
    let (closed_tx, closed_rx) = oneshot::channel();
    tokio::spawn(async move {
        let (mut socket, _) = listener.accept().await.unwrap();
        read_request(&mut socket).await;
        socket.write_all(sse_head().as_bytes()).await.unwrap();
        // Keep writing until the client hangs up, like a server generating a long reply.
        for i in 0..2000 {
            if socket.write_all(chunk(&format!("t{i} ")).as_bytes()).await.is_err() {
                let _ = closed_tx.send(i);
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    });
    let client = Client::new(&base, None).unwrap();
    let mut stream = client.chat(&hello()).await.unwrap();
    for _ in 0..3 {
        assert!(matches!(stream.next().await, Some(Ok(ChatEvent::Text(_)))));
    }
    drop(stream); // Stop
    let sent_before_close = tokio::time::timeout(Duration::from_secs(10), closed_rx).await.expect("the server saw the close").unwrap();
    assert!(sent_before_close < 1000, "the server kept writing for {sent_before_close} pieces");
}

#[tokio::test]
async fn models_are_listed_and_a_non_api_answer_is_malformed() {
    let list = r#"{"object":"list","data":[{"id":"b-model","object":"model","owned_by":"me"},{"id":"a-model","object":"model"}]}"#;
    let (base, request) = stub(script(&[&format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{list}",
        list.len()
    )]))
    .await;
    let models = Client::new(&base, Some(KEY)).unwrap().models().await.unwrap();
    assert_eq!(models.iter().map(|m| m.id.as_str()).collect::<Vec<_>>(), ["a-model", "b-model"]);
    assert!(request.await.unwrap().starts_with("GET /v1/models HTTP/1.1"));

    let html = "<html>Welcome to nginx</html>";
    let (base, _) = stub(script(&[&format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{html}", html.len())])).await;
    let error = Client::new(&base, None).unwrap().models().await.unwrap_err();
    assert!(matches!(error, RemoteError::Malformed { .. }), "{error:?}");
    assert!(error.to_string().contains("usually ends in /v1"), "{error}");
}

/// One event carrying `tool_calls` deltas.
fn call_delta(deltas: serde_json::Value) -> String {
    format!("data: {}\n\n", serde_json::json!({ "choices": [{ "index": 0, "delta": { "tool_calls": deltas }, "finish_reason": null }] }))
}

/// Writes `body` in pieces cut at `cuts` (byte offsets), wherever they fall: mid-line, mid-event,
/// mid-character.
fn cut_at(body: &str, cuts: &[usize]) -> Vec<Vec<u8>> {
    let bytes = body.as_bytes();
    let mut pieces = Vec::new();
    let mut start = 0;
    for &cut in cuts.iter().chain(&[bytes.len()]) {
        let cut = cut.min(bytes.len());
        if cut > start {
            pieces.push(bytes[start..cut].to_vec());
            start = cut;
        }
    }
    pieces
}

#[tokio::test]
async fn tool_calls_streamed_in_pieces_come_whole_before_the_finish() {
    let events = [
        chunk("Let me check."),
        call_delta(
            serde_json::json!([{ "index": 0, "id": "call_a", "type": "function", "function": { "name": "forecast", "arguments": "" } }]),
        ),
        call_delta(serde_json::json!([{ "index": 0, "function": { "arguments": "{\"city\": \"Zü" } }])),
        call_delta(
            serde_json::json!([{ "index": 1, "id": "call_b", "type": "function", "function": { "name": "clock", "arguments": "{" } }]),
        ),
        call_delta(
            serde_json::json!([{ "index": 0, "function": { "arguments": "rich\"}" } }, { "index": 1, "function": { "arguments": "}" } }]),
        ),
        // Not JSON: passed on as the model wrote it, for the app to report back.
        call_delta(serde_json::json!([{ "index": 2, "id": "call_c", "function": { "name": "broken", "arguments": "{city: Bern" } }])),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n".into(),
        "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":30,\"completion_tokens\":12}}\n\ndata: [DONE]\n\n".into(),
    ];
    let body = events.concat();
    // Cut in the middle of `data:`, of the `Zü` (between the bytes of `ü`), of a JSON key, and
    // between the two newlines that end an event.
    let umlaut = body.find('ü').unwrap() + 1;
    let cuts = [
        3,
        events[0].len() - 1,
        body.find("tool_calls").unwrap() + 4,
        umlaut,
        body.find("\"call_b").unwrap() + 2,
        body.find("clock").unwrap() + 30,
    ];
    let mut pieces = vec![sse_head().as_bytes().to_vec()];
    pieces.extend(cut_at(&body, &cuts));
    let (base, request) = stub(Script { pieces, pause: Duration::from_millis(5) }).await;

    let client = Client::new(&base, None).unwrap();
    let mut chat = hello();
    let tool = serde_json::json!({ "type": "function", "function": { "name": "forecast", "parameters": { "type": "object" } } });
    chat.tools = vec![tool.clone()];
    chat.tool_choice = Some(serde_json::json!("auto"));
    let mut stream = client.chat(&chat).await.unwrap();
    assert_eq!(stream.next().await.unwrap().unwrap(), ChatEvent::Text("Let me check.".into()));
    let call = |id: &str, name: &str, arguments: &str| RemoteToolCall { id: id.into(), name: name.into(), arguments: arguments.into() };
    assert_eq!(
        stream.next().await.unwrap().unwrap(),
        ChatEvent::ToolCalls(vec![
            call("call_a", "forecast", "{\"city\": \"Zürich\"}"),
            call("call_b", "clock", "{}"),
            call("call_c", "broken", "{city: Bern")
        ])
    );
    let Some(Ok(ChatEvent::Finished(finished))) = stream.next().await else { panic!("Finished follows the calls") };
    assert_eq!((finished.reason.as_deref(), finished.generated_tokens()), (Some("tool_calls"), 12));
    assert!(stream.next().await.is_none());

    let sent = request.await.unwrap();
    let body: serde_json::Value = serde_json::from_str(&sent[sent.find("\r\n\r\n").unwrap() + 4..]).unwrap();
    assert_eq!((body["tools"].clone(), body["tool_choice"].clone()), (serde_json::json!([tool]), serde_json::json!("auto")));
}

#[tokio::test]
async fn tool_calls_of_a_stream_that_ends_without_done_still_come() {
    let body = [
        sse_head().to_string(),
        call_delta(serde_json::json!([{ "index": 0, "id": "call_x", "function": { "name": "clock", "arguments": "{}" } }])),
        "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n".into(),
    ];
    let (base, _) = stub(script(&body.iter().map(String::as_str).collect::<Vec<_>>())).await;
    let mut stream = Client::new(&base, None).unwrap().chat(&hello()).await.unwrap();
    let Some(Ok(ChatEvent::ToolCalls(calls))) = stream.next().await else { panic!("the calls") };
    assert_eq!(calls[0].name, "clock");
    assert!(matches!(stream.next().await, Some(Ok(ChatEvent::Finished(_)))));
    assert!(stream.next().await.is_none());

    // Cut off mid-call: an interruption, and no half call is passed on.
    let body = [
        sse_head().to_string(),
        call_delta(serde_json::json!([{ "index": 0, "id": "call_y", "function": { "name": "clock", "arguments": "{\"tz\":" } }])),
    ];
    let (base, _) = stub(script(&body.iter().map(String::as_str).collect::<Vec<_>>())).await;
    let mut stream = Client::new(&base, None).unwrap().chat(&hello()).await.unwrap();
    let error = stream.next().await.unwrap().unwrap_err();
    assert!(matches!(error, RemoteError::Interrupted { .. }), "{error:?}");
    assert!(stream.next().await.is_none());
}
