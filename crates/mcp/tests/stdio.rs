//! The host against tests/mcp/test_server.py, a real stdio MCP server process: tools, results,
//! timeouts, cancels, crashes, restarts and stops. Time limits are generous for a loaded
//! 2-core machine but far below the tool timeouts, so "promptly" is checked.

mod common;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use common::{args, have_python, never, ready, test_server, wait_for, wait_gone};
use confab_mcp::{CallError, McpHost, OutputPart, ServerState, Transport, MAX_RESULT_TEXT, STDERR_TAIL_LINES};
use serde_json::json;

const LONG: Duration = Duration::from_secs(30);
/// How soon an ended call must return (the tool itself would take 30 s).
const PROMPT: Duration = Duration::from_secs(3);

fn pids(text: &str) -> (u32, Option<u32>) {
    let value: serde_json::Value = serde_json::from_str(text).unwrap();
    (value["pid"].as_u64().unwrap() as u32, value["helper"].as_u64().map(|p| p as u32))
}

#[tokio::test]
async fn lists_every_page_of_tools_and_returns_text_images_and_errors() {
    if !have_python("lists_every_page_of_tools_and_returns_text_images_and_errors") {
        return;
    }
    let host = McpHost::new();
    let mut spec = test_server("py", &["--page-size", "2"]);
    if let Transport::Stdio { env, .. } = &mut spec.transport {
        env.insert("CONFAB_TEST_TOKEN".into(), "s3cret".into());
    }
    host.start(spec);
    let status = ready(&host, "py").await;
    let names: Vec<&str> = status.tools.iter().map(|t| t.name.as_str()).collect();
    // Five pages of two.
    assert_eq!(names, ["echo", "big", "slow", "crash", "fail", "image", "pid", "env", "grow"]);
    assert_eq!(status.tools[0].description.as_deref(), Some("Returns the text it is given."));
    assert_eq!(status.tools[0].input_schema["properties"]["text"]["type"], "string");

    let echo = host.call("py", "echo", args(json!({"text": "héllo"})), LONG, never()).await.unwrap();
    assert_eq!(echo.parts, [OutputPart::Text("héllo".into())]);
    assert!(!echo.is_error && echo.truncated_note.is_none());

    let image = host.call("py", "image", args(json!({})), LONG, never()).await.unwrap();
    assert_eq!(image.text(), "a red pixel");
    let (mime, data) = image.images().next().unwrap();
    assert_eq!(mime, "image/png");
    assert!(data.starts_with(b"\x89PNG\r\n\x1a\n"), "decoded PNG bytes");

    let fail = host.call("py", "fail", args(json!({})), LONG, never()).await.unwrap();
    assert!(fail.is_error);
    assert_eq!(fail.text(), "the tool failed on purpose");

    let env = host.call("py", "env", args(json!({"name": "CONFAB_TEST_TOKEN"})), LONG, never()).await.unwrap();
    assert_eq!(env.text(), "s3cret", "the spec's environment reaches the server");

    match host.call("py", "nope", args(json!({})), LONG, never()).await {
        Err(CallError::UnknownTool { available, .. }) => assert!(available.contains("echo, big"), "{available}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(host.call("other", "echo", args(json!({})), LONG, never()).await, Err(CallError::UnknownServer { .. })));
}

#[tokio::test]
async fn a_big_result_is_truncated_with_a_note() {
    if !have_python("a_big_result_is_truncated_with_a_note") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let output = host.call("py", "big", args(json!({"mb": 5.2})), LONG, never()).await.unwrap();
    let text = output.text();
    let note = "[Confab truncated this result: the tool returned 5.2 MB; the first 100 KB are shown.]";
    assert_eq!(output.truncated_note.as_deref(), Some(note));
    assert!(text.ends_with(note), "{}", &text[text.len() - 200..]);
    // The kept text plus the blank line and the note: within the limit and a line of slack.
    assert!(text.len() <= MAX_RESULT_TEXT + 2 + note.len(), "{}", text.len());
    assert!(text.len() >= MAX_RESULT_TEXT - 4, "{}", text.len());
}

#[tokio::test]
async fn a_timeout_ends_the_call_sends_cancelled_and_the_server_stays_usable() {
    if !have_python("a_timeout_ends_the_call_sends_cancelled_and_the_server_stays_usable") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let started = Instant::now();
    let result = host.call("py", "slow", args(json!({"seconds": 30})), Duration::from_millis(300), never()).await;
    let elapsed = started.elapsed();
    match result {
        Err(error @ CallError::Timeout { .. }) => assert!(error.to_string().contains("did not answer within 0.3 s"), "{error}"),
        other => panic!("{other:?}"),
    }
    assert!(elapsed < PROMPT, "{elapsed:?}");
    // The server logs the notifications/cancelled it got.
    wait_for(&host, "py", PROMPT, |s| s.stderr_tail.iter().any(|l| l.starts_with("cancelled request"))).await;
    let echo = host.call("py", "echo", args(json!({"text": "still here"})), LONG, never()).await.unwrap();
    assert_eq!(echo.text(), "still here");
}

#[tokio::test]
async fn stop_cancels_the_call_and_the_server_stays_usable() {
    if !have_python("stop_cancels_the_call_and_the_server_stays_usable") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let started = Instant::now();
    let stop_button = tokio::time::sleep(Duration::from_millis(200));
    let result = host.call("py", "slow", args(json!({"seconds": 30})), LONG, stop_button).await;
    assert_eq!(result, Err(CallError::Cancelled));
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    wait_for(&host, "py", PROMPT, |s| s.stderr_tail.iter().any(|l| l.starts_with("cancelled request"))).await;
    // A quick call while the server is busy with nothing else.
    let slow = host.call("py", "slow", args(json!({"seconds": 0.1})), LONG, never()).await.unwrap();
    assert_eq!(slow.text(), "slept 0.1 s");
}

#[tokio::test]
async fn a_crash_mid_call_fails_the_call_at_once_and_a_restart_recovers() {
    if !have_python("a_crash_mid_call_fails_the_call_at_once_and_a_restart_recovers") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let started = Instant::now();
    match host.call("py", "crash", args(json!({})), LONG, never()).await {
        Err(error @ CallError::ServerExited { .. }) => {
            let CallError::ServerExited { stderr_tail, .. } = &error else { unreachable!() };
            assert!(stderr_tail.iter().any(|l| l.contains("crashing on purpose")), "{stderr_tail:?}");
            assert!(error.to_string().contains("Restart it"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    let status = wait_for(&host, "py", PROMPT, |s| matches!(s.state, ServerState::Failed { .. })).await;
    let ServerState::Failed { error } = &status.state else { unreachable!() };
    assert!(error.contains("exited with status 3"), "{error}");
    assert!(status.stderr_tail.iter().any(|l| l.contains("crashing on purpose")), "{status:?}");
    assert!(status.tools.is_empty());
    match host.call("py", "echo", args(json!({"text": "x"})), LONG, never()).await {
        Err(error @ CallError::NotReady { .. }) => {
            assert!(error.to_string().contains("`py` has failed, so its tools cannot be called now. It exited with status 3."), "{error}")
        }
        other => panic!("{other:?}"),
    }

    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let echo = host.call("py", "echo", args(json!({"text": "back"})), LONG, never()).await.unwrap();
    assert_eq!(echo.text(), "back");
}

#[tokio::test]
async fn a_server_that_fails_at_start_shows_its_last_stderr_lines() {
    if !have_python("a_server_that_fails_at_start_shows_its_last_stderr_lines") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &["--stderr-lines", "30", "--exit-at-start", "2"]));
    let status = wait_for(&host, "py", LONG, |s| s.state != ServerState::Starting).await;
    let ServerState::Failed { error } = &status.state else { panic!("{status:?}") };
    assert!(error.contains("exited with status 2"), "{error}");
    assert_eq!(status.stderr_tail.len(), STDERR_TAIL_LINES);
    assert_eq!(status.stderr_tail.last().unwrap(), "confab-test-server: missing API key, giving up");
    assert_eq!(status.stderr_tail[0], "stderr line 13", "the oldest lines are dropped");
}

#[tokio::test]
async fn a_missing_command_fails_with_what_to_do() {
    let host = McpHost::new();
    host.start(confab_mcp::ServerSpec {
        name: "ghost".into(),
        transport: Transport::Stdio { command: "confab-no-such-command".into(), args: vec![], env: BTreeMap::new(), cwd: None },
    });
    let status = wait_for(&host, "ghost", LONG, |s| s.state != ServerState::Starting).await;
    let ServerState::Failed { error } = &status.state else { panic!("{status:?}") };
    assert!(error.contains("`confab-no-such-command` was not found. Install it"), "{error}");
}

#[tokio::test]
async fn stop_kills_the_process_group_and_the_state_says_stopped() {
    if !have_python("stop_kills_the_process_group_and_the_state_says_stopped") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &["--grandchild"]));
    ready(&host, "py").await;
    let output = host.call("py", "pid", args(json!({})), LONG, never()).await.unwrap();
    let (pid, helper) = pids(&output.text());
    let helper = helper.expect("the helper process");
    assert!(common::process_state(pid).is_some() && common::process_state(helper).is_some());

    let started = Instant::now();
    host.stop("py").await;
    assert!(started.elapsed() < PROMPT, "{:?}", started.elapsed());
    // The server is reaped by the host (no zombie); the helper, orphaned, by whoever adopts it.
    assert!(wait_gone(pid, Duration::ZERO, false), "server {pid}: {:?}", common::process_state(pid));
    assert!(wait_gone(helper, PROMPT, true), "helper {helper}: {:?}", common::process_state(helper));
    let status = &host.status()[0];
    assert_eq!((status.state.clone(), status.tools.len()), (ServerState::Stopped, 0));
    assert!(matches!(host.call("py", "echo", args(json!({"text": "x"})), LONG, never()).await, Err(CallError::NotReady { .. })));
    host.remove("py").await;
    assert!(host.status().is_empty());
}

#[tokio::test]
async fn dropping_the_host_kills_its_servers() {
    if !have_python("dropping_the_host_kills_its_servers") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("a", &[]));
    host.start(test_server("b", &[]));
    ready(&host, "a").await;
    ready(&host, "b").await;
    let mut server_pids = Vec::new();
    for name in ["a", "b"] {
        let output = host.call(name, "pid", args(json!({})), LONG, never()).await.unwrap();
        server_pids.push(pids(&output.text()).0);
    }
    drop(host);
    for pid in server_pids {
        assert!(wait_gone(pid, PROMPT, false), "{pid}: {:?}", common::process_state(pid));
    }
}

#[tokio::test]
async fn a_restart_replaces_the_running_process() {
    if !have_python("a_restart_replaces_the_running_process") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let first = pids(&host.call("py", "pid", args(json!({})), LONG, never()).await.unwrap().text()).0;
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    let second = pids(&host.call("py", "pid", args(json!({})), LONG, never()).await.unwrap().text()).0;
    assert_ne!(first, second);
    assert!(wait_gone(first, PROMPT, false), "{first}: {:?}", common::process_state(first));
}

#[tokio::test]
async fn a_changed_tool_list_is_fetched_again() {
    if !have_python("a_changed_tool_list_is_fetched_again") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    ready(&host, "py").await;
    host.call("py", "grow", args(json!({})), LONG, never()).await.unwrap();
    wait_for(&host, "py", PROMPT, |s| s.tools.iter().any(|t| t.name == "extra")).await;
    let extra = host.call("py", "extra", args(json!({})), LONG, never()).await.unwrap();
    assert_eq!(extra.text(), "extra tool called");
}

/// The host made outside any runtime, then used from two different runtimes in turn.
#[test]
fn usable_from_any_runtime() {
    if !have_python("usable_from_any_runtime") {
        return;
    }
    let host = McpHost::new();
    host.start(test_server("py", &[]));
    for _ in 0..2 {
        let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
        runtime.block_on(async {
            ready(&host, "py").await;
            let echo = host.call("py", "echo", args(json!({"text": "hi"})), LONG, never()).await.unwrap();
            assert_eq!(echo.text(), "hi");
        });
    }
}
