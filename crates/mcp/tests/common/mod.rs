//! Helpers shared by the integration tests: the servers under test, waiting for a state, and
//! checking that a process is gone.
#![allow(dead_code)] // Each test file uses its own subset.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Command;
use std::time::{Duration, Instant};

use confab_mcp::{McpHost, ServerSpec, ServerState, ServerStatus, Transport};

/// The repository's tests/mcp folder (the Python test server, the npm servers).
pub fn tests_mcp() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/mcp")
}

/// True when python3 runs; otherwise prints why the test is skipped.
pub fn have_python(test: &str) -> bool {
    let ok = Command::new("python3").arg("--version").output().is_ok_and(|o| o.status.success());
    if !ok {
        println!("skipping {test}: python3 is not installed (it runs tests/mcp/test_server.py)");
    }
    ok
}

/// The stdio spec of tests/mcp/test_server.py with these options.
pub fn test_server(name: &str, options: &[&str]) -> ServerSpec {
    let script = tests_mcp().join("test_server.py");
    let mut args = vec![script.display().to_string()];
    args.extend(options.iter().map(|o| o.to_string()));
    ServerSpec { name: name.to_string(), transport: Transport::Stdio { command: "python3".into(), args, env: BTreeMap::new(), cwd: None } }
}

/// An npm-installed server's executable, or None (with the reason printed) before setup.
pub fn npm_bin(test: &str, bin: &str) -> Option<PathBuf> {
    let path = tests_mcp().join("node_modules/.bin").join(bin);
    if path.exists() {
        Some(path)
    } else {
        println!("skipping {test}: {} is missing; run scripts/setup.sh (npm ci --prefix tests/mcp)", path.display());
        None
    }
}

/// Waits (up to `limit`) until `name`'s status satisfies `done`, and returns it. Wakes on
/// changes, and every 50 ms for the stderr tail (new lines don't signal a change).
pub async fn wait_for(host: &McpHost, name: &str, limit: Duration, done: impl Fn(&ServerStatus) -> bool) -> ServerStatus {
    let mut changes = host.changes();
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        if let Some(status) = host.status().into_iter().find(|s| s.name == name) {
            if done(&status) {
                return status;
            }
        }
        if tokio::time::Instant::now() >= deadline {
            panic!("{name} did not reach the expected state within {limit:?}: {:?}", host.status());
        }
        let _ = tokio::time::timeout(Duration::from_millis(50), changes.changed()).await;
    }
}

/// Waits for Ready (starting a Python server takes well under a second; npm ones a few).
pub async fn ready(host: &McpHost, name: &str) -> ServerStatus {
    wait_for(host, name, Duration::from_secs(30), |s| s.state != ServerState::Starting).await;
    let status = host.status().into_iter().find(|s| s.name == name).unwrap();
    assert_eq!(status.state, ServerState::Ready, "{status:?}");
    status
}

/// The process's state letter from ps (Z for a zombie), or None once it is gone.
pub fn process_state(pid: u32) -> Option<String> {
    let out = Command::new("ps").args(["-o", "stat=", "-p", &pid.to_string()]).output().ok()?;
    let state = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (!state.is_empty()).then_some(state)
}

/// Waits until the process is gone (a zombie counts as alive unless `zombie_ok`).
pub fn wait_gone(pid: u32, limit: Duration, zombie_ok: bool) -> bool {
    let start = Instant::now();
    loop {
        match process_state(pid) {
            None => return true,
            Some(state) if zombie_ok && state.starts_with('Z') => return true,
            Some(_) if start.elapsed() > limit => return false,
            Some(_) => std::thread::sleep(Duration::from_millis(20)),
        }
    }
}

pub fn args(json: serde_json::Value) -> serde_json::Map<String, serde_json::Value> {
    match json {
        serde_json::Value::Object(map) => map,
        _ => panic!("arguments must be an object"),
    }
}

/// A cancel future that never fires.
pub fn never() -> std::future::Pending<()> {
    std::future::pending()
}
