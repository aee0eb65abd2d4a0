//! The host against the official MCP servers from npm (tests/mcp/package.json, installed by
//! scripts/setup.sh): the filesystem server, and the everything server over stdio and over
//! streamable HTTP on loopback. Each test skips, saying why, when node_modules is absent.

mod common;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::{args, never, npm_bin, ready};
use confab_mcp::{CallError, McpHost, ServerSpec, Transport};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const LONG: Duration = Duration::from_secs(30);

fn stdio(name: &str, command: &std::path::Path, args: &[&str]) -> ServerSpec {
    ServerSpec {
        name: name.into(),
        transport: Transport::Stdio {
            command: command.display().to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: BTreeMap::new(),
            cwd: None,
        },
    }
}

#[tokio::test]
async fn filesystem_server_reads_a_file_in_its_folder() {
    let Some(bin) = npm_bin("filesystem_server_reads_a_file_in_its_folder", "mcp-server-filesystem") else { return };
    let folder = tempfile::tempdir().unwrap();
    // Canonical: on macOS the temp folder is behind a symlink, which the server resolves.
    let root = folder.path().canonicalize().unwrap();
    std::fs::write(root.join("note.txt"), "written by the confab-mcp test\n").unwrap();
    let host = McpHost::new();
    host.start(stdio("files", &bin, &[root.to_str().unwrap()]));
    let status = ready(&host, "files").await;
    let tool = ["read_text_file", "read_file"]
        .into_iter()
        .find(|name| status.tools.iter().any(|t| t.name == *name))
        .unwrap_or_else(|| panic!("no read tool in {:?}", status.tools.iter().map(|t| &t.name).collect::<Vec<_>>()));
    let path = root.join("note.txt").display().to_string();
    let output = host.call("files", tool, args(json!({"path": path})), LONG, never()).await.unwrap();
    assert!(!output.is_error, "{output:?}");
    assert!(output.text().contains("written by the confab-mcp test"), "{output:?}");
    // Outside its folder: the server refuses (an error result or an error answer).
    let outside = host.call("files", tool, args(json!({"path": "/etc/hostname"})), LONG, never()).await;
    assert!(matches!(&outside, Ok(o) if o.is_error) || matches!(outside, Err(CallError::Protocol { .. })), "{outside:?}");
}

#[tokio::test]
async fn everything_server_image_error_and_timeout() {
    let Some(bin) = npm_bin("everything_server_image_error_and_timeout", "mcp-server-everything") else { return };
    let host = McpHost::new();
    host.start(stdio("everything", &bin, &["stdio"]));
    ready(&host, "everything").await;

    let image = host.call("everything", "get-tiny-image", args(json!({})), LONG, never()).await.unwrap();
    let (mime, data) = image.images().next().unwrap_or_else(|| panic!("no image in {image:?}"));
    assert_eq!(mime, "image/png");
    assert!(data.starts_with(b"\x89PNG"), "decoded PNG bytes");

    // Arguments that fail the tool's schema: an error result or an error answer, never a value.
    let bad = host.call("everything", "get-sum", args(json!({"a": "one", "b": 2})), LONG, never()).await;
    assert!(matches!(&bad, Ok(o) if o.is_error) || matches!(bad, Err(CallError::Protocol { .. })), "{bad:?}");

    let started = Instant::now();
    let slow = host
        .call(
            "everything",
            "trigger-long-running-operation",
            args(json!({"duration": 30, "steps": 30})),
            Duration::from_millis(500),
            never(),
        )
        .await;
    assert!(matches!(slow, Err(CallError::Timeout { .. })), "{slow:?}");
    assert!(started.elapsed() < Duration::from_secs(3), "{:?}", started.elapsed());
    let echo = host.call("everything", "echo", args(json!({"message": "after the timeout"})), LONG, never()).await.unwrap();
    assert!(echo.text().contains("after the timeout"), "{echo:?}");
}

/// A loopback TCP proxy that records the head of the first request on each connection.
async fn recording_proxy(upstream: u16) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let heads = Arc::new(Mutex::new(Vec::new()));
    let recorded = heads.clone();
    tokio::spawn(async move {
        while let Ok((mut client, _)) = listener.accept().await {
            let heads = recorded.clone();
            tokio::spawn(async move {
                let mut head = Vec::new();
                let mut byte = [0u8; 1];
                while !head.ends_with(b"\r\n\r\n") {
                    if client.read(&mut byte).await.unwrap_or(0) == 0 {
                        return;
                    }
                    head.push(byte[0]);
                }
                heads.lock().unwrap().push(String::from_utf8_lossy(&head).to_lowercase());
                let Ok(mut server) = TcpStream::connect(("127.0.0.1", upstream)).await else { return };
                if server.write_all(&head).await.is_ok() {
                    let _ = tokio::io::copy_bidirectional(&mut client, &mut server).await;
                }
            });
        }
    });
    (port, heads)
}

#[tokio::test]
async fn streamable_http_with_a_custom_header() {
    let Some(bin) = npm_bin("streamable_http_with_a_custom_header", "mcp-server-everything") else { return };
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let mut server = tokio::process::Command::new(&bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < deadline, "the everything server did not listen on {port}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (proxy, heads) = recording_proxy(port).await;

    let host = McpHost::new();
    host.start(ServerSpec {
        name: "web".into(),
        transport: Transport::Http {
            url: format!("http://127.0.0.1:{proxy}/mcp"),
            headers: [("X-Confab-Test".to_string(), "header-value".to_string())].into(),
        },
    });
    let status = ready(&host, "web").await;
    assert!(status.tools.iter().any(|t| t.name == "echo"), "{status:?}");
    let echo = host.call("web", "echo", args(json!({"message": "over http"})), LONG, never()).await.unwrap();
    assert!(echo.text().contains("over http"), "{echo:?}");
    let heads = heads.lock().unwrap().clone();
    assert!(!heads.is_empty() && heads.iter().all(|h| h.contains("x-confab-test: header-value")), "{heads:?}");
    // A wrong path: the status says what came back.
    host.start(ServerSpec {
        name: "wrong".into(),
        transport: Transport::Http { url: format!("http://127.0.0.1:{port}/nope"), headers: BTreeMap::new() },
    });
    let wrong = common::wait_for(&host, "wrong", LONG, |s| s.state != confab_mcp::ServerState::Starting).await;
    let confab_mcp::ServerState::Failed { error } = &wrong.state else { panic!("{wrong:?}") };
    assert!(error.contains("404"), "{error}");
    host.stop("web").await;
    let _ = server.kill().await;
}

#[tokio::test]
async fn an_http_server_that_is_not_there_fails_with_the_reason() {
    let port = TcpListener::bind("127.0.0.1:0").await.unwrap().local_addr().unwrap().port();
    let host = McpHost::new();
    host.start(ServerSpec {
        name: "gone".into(),
        transport: Transport::Http { url: format!("http://127.0.0.1:{port}/mcp"), headers: BTreeMap::new() },
    });
    let status = common::wait_for(&host, "gone", LONG, |s| s.state != confab_mcp::ServerState::Starting).await;
    let confab_mcp::ServerState::Failed { error } = &status.state else { panic!("{status:?}") };
    assert!(error.contains("could not be reached (") && error.contains("Check the URL"), "{error}");
}
