//! Server specifications and the import of the `mcpServers` JSON that other MCP hosts write
//! (Claude Desktop, Cursor, LM Studio, Windsurf, VS Code's `servers`).

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::error::McpError;

/// One MCP server, with everything needed to start it (secrets already resolved).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerSpec {
    pub name: String,
    pub transport: Transport,
}

/// How to reach a server.
#[derive(Clone, PartialEq, Eq)]
pub enum Transport {
    /// A child process speaking newline-delimited JSON-RPC on stdin/stdout.
    Stdio { command: String, args: Vec<String>, env: BTreeMap<String, String>, cwd: Option<PathBuf> },
    /// MCP's streamable HTTP transport at `url`, with `headers` on every request.
    Http { url: String, headers: BTreeMap<String, String> },
}

// By hand: environment and header values are often keys, and specs end up in logs.
impl std::fmt::Debug for Transport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Transport::Stdio { command, args, env, cwd } => f
                .debug_struct("Stdio")
                .field("command", command)
                .field("args", args)
                .field("env", &env.keys().collect::<Vec<_>>())
                .field("cwd", cwd)
                .finish(),
            Transport::Http { url, headers } => {
                f.debug_struct("Http").field("url", &loggable_url(url)).field("headers", &headers.keys().collect::<Vec<_>>()).finish()
            }
        }
    }
}

/// The URL without what may hold a key: user, password, query and fragment.
pub(crate) fn loggable_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => "(not a URL)".to_string(),
    }
}

/// Parses what Claude Desktop, Cursor, LM Studio, Windsurf and VS Code write: `{"mcpServers":
/// {name: {...}}}`, VS Code's `{"servers": {...}}`, or the inner map alone. Entries with
/// `command` (+ `args`, `env`, `cwd`) are stdio; entries with `url` (+ `headers`, an optional
/// `"type": "http"`) are streamable HTTP. Comments and trailing commas (VS Code's JSONC) are
/// accepted; unknown keys (`autoApprove`, `disabled`, ...) are ignored. Servers come back sorted
/// by name.
pub fn import_servers(json: &str) -> Result<Vec<ServerSpec>, McpError> {
    let document: Value = serde_json::from_str(&strip_jsonc(json)).map_err(|e| McpError::NotJson { detail: e.to_string() })?;
    let Value::Object(top) = document else {
        return Err(McpError::BadShape { what: format!("are {}, not an object", kind(&document)) });
    };
    let servers = server_map(&top)?;
    if servers.is_empty() {
        return Err(McpError::NoServers);
    }
    // By name: serde_json's map keeps the file's order only when some crate in the build turns
    // on its `preserve_order` (the app's does), so one order for every build.
    let mut specs = servers.iter().map(|(name, entry)| parse_entry(name, entry)).collect::<Result<Vec<_>, _>>()?;
    specs.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(specs)
}

/// The map of servers inside the document: under `mcpServers`, VS Code's `servers`, or the top.
fn server_map(top: &Map<String, Value>) -> Result<&Map<String, Value>, McpError> {
    match top.get("mcpServers") {
        Some(Value::Object(map)) => return Ok(map),
        Some(other) => return Err(McpError::BadShape { what: format!("have `mcpServers` as {}, not an object of servers", kind(other)) }),
        None => {}
    }
    // VS Code's key; unless it is a server named "servers" in a map pasted alone.
    if let Some(Value::Object(map)) = top.get("servers") {
        if !looks_like_entry(map) {
            return Ok(map);
        }
    }
    if looks_like_entry(top) {
        return Err(McpError::BadShape { what: "look like one server's settings without its name".to_string() });
    }
    Ok(top)
}

fn looks_like_entry(map: &Map<String, Value>) -> bool {
    ["command", "url", "serverUrl", "args"].iter().any(|key| map.contains_key(*key))
}

fn parse_entry(name: &str, entry: &Value) -> Result<ServerSpec, McpError> {
    let bad = |problem: String| McpError::BadEntry { server: name.to_string(), problem };
    if name.trim().is_empty() {
        return Err(bad("the name is empty. Give every server a name.".to_string()));
    }
    let Value::Object(entry) = entry else {
        return Err(bad(format!("its settings are {}, not an object with `command` or `url`.", kind(entry))));
    };
    let kind_field = match entry.get("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(other) => return Err(bad(format!("`type` is {}, not a string.", kind(other)))),
    };
    if kind_field == Some("sse") {
        return Err(bad("it uses the SSE transport (\"type\": \"sse\"), which Confab does not support: only stdio and \
             streamable HTTP are. If the server also offers streamable HTTP (often at /mcp instead of /sse), use \
             that URL with \"type\": \"http\"."
            .to_string()));
    }
    let url = match (entry.get("url"), entry.get("serverUrl")) {
        (Some(url), _) | (None, Some(url)) => Some(url),
        (None, None) => None,
    };
    let command = entry.get("command");
    let transport = match (command, url) {
        (Some(_), Some(_)) => {
            return Err(bad("it has both `command` and `url`. Keep `command` for a local server or `url` for a remote one.".to_string()))
        }
        (None, None) => {
            return Err(bad("it has neither `command` (a local server) nor `url` (a remote one). Add one of them.".to_string()))
        }
        (Some(command), None) => {
            if let Some(other) = kind_field.filter(|t| *t != "stdio") {
                return Err(bad(format!("`type` is \"{other}\" but it has a `command`; use \"type\": \"stdio\" or add a `url`.")));
            }
            let command = match command {
                Value::String(c) if !c.trim().is_empty() => c.clone(),
                Value::String(_) => return Err(bad("`command` is empty. Name the program to run, such as npx.".to_string())),
                other => return Err(bad(format!("`command` is {}, not a string.", kind(other)))),
            };
            let args = match entry.get("args") {
                None | Some(Value::Null) => Vec::new(),
                Some(Value::Array(items)) => items
                    .iter()
                    .enumerate()
                    .map(|(i, item)| scalar_string(item).ok_or_else(|| bad(format!("`args[{i}]` is {}, not a string.", kind(item)))))
                    .collect::<Result<_, _>>()?,
                Some(other) => return Err(bad(format!("`args` is {}, not a list of strings.", kind(other)))),
            };
            let cwd = match entry.get("cwd") {
                None | Some(Value::Null) => None,
                Some(Value::String(dir)) if dir.is_empty() => None,
                Some(Value::String(dir)) => Some(PathBuf::from(dir)),
                Some(other) => return Err(bad(format!("`cwd` is {}, not a folder path.", kind(other)))),
            };
            Transport::Stdio { command, args, env: string_map(entry, "env", &bad)?, cwd }
        }
        (None, Some(url)) => {
            if let Some(other) = kind_field.filter(|t| !["http", "streamable-http", "streamableHttp"].contains(t)) {
                return Err(bad(format!("`type` is \"{other}\"; a server with a `url` must use \"type\": \"http\" (streamable HTTP).")));
            }
            let Value::String(url) = url else {
                return Err(bad(format!("`url` is {}, not a string.", kind(url))));
            };
            check_url(url).map_err(&bad)?;
            Transport::Http { url: url.clone(), headers: string_map(entry, "headers", &bad)? }
        }
    };
    Ok(ServerSpec { name: name.to_string(), transport })
}

/// An `http(s)://` address, or why not.
pub(crate) fn check_url(url: &str) -> Result<(), String> {
    match reqwest::Url::parse(url) {
        Ok(parsed) if matches!(parsed.scheme(), "http" | "https") => Ok(()),
        Ok(parsed) => Err(format!(
            "the URL `{url}` uses `{}:`; use an http:// or https:// address such as http://localhost:3001/mcp.",
            parsed.scheme()
        )),
        Err(e) => Err(format!("the URL `{url}` is not valid ({e}); use an address such as http://localhost:3001/mcp.")),
    }
}

/// `env` or `headers`: names to strings (numbers and booleans are written as text, as shells do).
fn string_map(entry: &Map<String, Value>, key: &str, bad: &dyn Fn(String) -> McpError) -> Result<BTreeMap<String, String>, McpError> {
    match entry.get(key) {
        None | Some(Value::Null) => Ok(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| match scalar_string(value) {
                // The value is not quoted back: it may be a secret.
                None => Err(bad(format!("`{key}.{name}` is {}, not a string.", kind(value)))),
                Some(text) => Ok((name.clone(), text)),
            })
            .collect(),
        Some(other) => Err(bad(format!("`{key}` is {}, not an object of names to strings.", kind(other)))),
    }
}

fn scalar_string(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// JSON with comments and trailing commas (VS Code's mcp.json) made plain JSON. Removed
/// characters become spaces so that serde's line and column numbers still point at the input.
fn strip_jsonc(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let blank = |c: char| if c == '\n' { '\n' } else { ' ' };
    while i < chars.len() {
        let c = chars[i];
        match c {
            '"' => {
                out.push(c);
                i += 1;
                while i < chars.len() {
                    out.push(chars[i]);
                    match chars[i] {
                        '\\' if i + 1 < chars.len() => {
                            out.push(chars[i + 1]);
                            i += 2;
                        }
                        '"' => {
                            i += 1;
                            break;
                        }
                        _ => i += 1,
                    }
                }
            }
            '/' if chars.get(i + 1) == Some(&'/') => {
                while i < chars.len() && chars[i] != '\n' {
                    out.push(' ');
                    i += 1;
                }
            }
            '/' if chars.get(i + 1) == Some(&'*') => {
                let end = (i + 2..chars.len().saturating_sub(1)).find(|&j| chars[j] == '*' && chars[j + 1] == '/');
                let stop = end.map_or(chars.len(), |j| j + 2);
                out.extend(chars[i..stop].iter().map(|&c| blank(c)));
                i = stop;
            }
            ',' => {
                // A trailing comma: the next significant character closes the object or list.
                let mut j = i + 1;
                loop {
                    while j < chars.len() && chars[j].is_whitespace() {
                        j += 1;
                    }
                    if chars.get(j) == Some(&'/') && chars.get(j + 1) == Some(&'/') {
                        while j < chars.len() && chars[j] != '\n' {
                            j += 1;
                        }
                    } else if chars.get(j) == Some(&'/') && chars.get(j + 1) == Some(&'*') {
                        j = (j + 2..chars.len().saturating_sub(1))
                            .find(|&k| chars[k] == '*' && chars[k + 1] == '/')
                            .map_or(chars.len(), |k| k + 2);
                    } else {
                        break;
                    }
                }
                out.push(if matches!(chars.get(j), Some('}') | Some(']')) { ' ' } else { ',' });
                i += 1;
            }
            _ => {
                out.push(c);
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stdio(command: &str, args: &[&str], env: &[(&str, &str)]) -> Transport {
        Transport::Stdio {
            command: command.to_string(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: env.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            cwd: None,
        }
    }

    fn entry_error(json: &str) -> String {
        match import_servers(json) {
            Err(e @ McpError::BadEntry { .. }) => e.to_string(),
            other => panic!("expected a bad entry, got {other:?}"),
        }
    }

    #[test]
    fn claude_desktop_format() {
        let json = r#"{"mcpServers": {
            "filesystem": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"]},
            "github": {"command": "docker", "args": ["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
                       "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_secret", "PORT": 8080, "DEBUG": true}}
        }}"#;
        let servers = import_servers(json).unwrap();
        assert_eq!(servers.len(), 2);
        assert_eq!(servers[0].name, "filesystem");
        assert_eq!(servers[0].transport, stdio("npx", &["-y", "@modelcontextprotocol/server-filesystem", "/Users/me/Desktop"], &[]));
        assert_eq!(
            servers[1].transport,
            stdio(
                "docker",
                &["run", "-i", "--rm", "ghcr.io/github/github-mcp-server"],
                &[("GITHUB_PERSONAL_ACCESS_TOKEN", "ghp_secret"), ("PORT", "8080"), ("DEBUG", "true")]
            )
        );
    }

    #[test]
    fn cursor_and_lm_studio_remote_entries() {
        let json = r#"{"mcpServers": {
            "remote": {"url": "https://example.com/mcp", "headers": {"Authorization": "Bearer abc"}},
            "typed": {"type": "streamable-http", "url": "http://127.0.0.1:3001/mcp"},
            "windsurf": {"serverUrl": "http://localhost:8000/mcp"},
            "local": {"command": "uvx", "args": ["mcp-server-time"], "cwd": "/tmp", "autoApprove": []}
        }}"#;
        let servers = import_servers(json).unwrap();
        let names: Vec<_> = servers.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["local", "remote", "typed", "windsurf"]);
        assert_eq!(
            servers[0].transport,
            Transport::Stdio {
                command: "uvx".into(),
                args: vec!["mcp-server-time".into()],
                env: BTreeMap::new(),
                cwd: Some(PathBuf::from("/tmp"))
            }
        );
        assert_eq!(
            servers[1].transport,
            Transport::Http {
                url: "https://example.com/mcp".into(),
                headers: [("Authorization".to_string(), "Bearer abc".to_string())].into()
            }
        );
        assert_eq!(servers[2].transport, Transport::Http { url: "http://127.0.0.1:3001/mcp".into(), headers: BTreeMap::new() });
        assert!(matches!(&servers[3].transport, Transport::Http { url, .. } if url == "http://localhost:8000/mcp"));
    }

    #[test]
    fn vs_code_servers_with_comments_and_trailing_commas() {
        let json = r#"{
            // VS Code's mcp.json
            "inputs": [],
            "servers": {
                "fetch": {"type": "stdio", "command": "uvx", "args": ["mcp-server-fetch",],},
                /* a remote one */
                "api": {"type": "http", "url": "https://api.example.com/mcp", "headers": {"X-Key": "a // not a comment"}},
            },
        }"#;
        let servers = import_servers(json).unwrap();
        assert_eq!(servers[0].name, "api");
        assert_eq!(
            servers[0].transport,
            Transport::Http {
                url: "https://api.example.com/mcp".into(),
                headers: [("X-Key".to_string(), "a // not a comment".to_string())].into()
            }
        );
        assert_eq!(servers[1].transport, stdio("uvx", &["mcp-server-fetch"], &[]));
    }

    #[test]
    fn inner_map_alone() {
        let servers = import_servers(r#"{"time": {"command": "uvx", "args": ["mcp-server-time"]}}"#).unwrap();
        assert_eq!(servers, [ServerSpec { name: "time".into(), transport: stdio("uvx", &["mcp-server-time"], &[]) }]);
        // A server may be called "servers" when the map is pasted alone.
        let servers = import_servers(r#"{"servers": {"command": "x"}}"#).unwrap();
        assert_eq!(servers[0].name, "servers");
    }

    #[test]
    fn sse_is_refused_with_the_way_out() {
        let message = entry_error(r#"{"mcpServers": {"old": {"type": "sse", "url": "http://localhost:8000/sse"}}}"#);
        assert!(message.contains("`old`"), "{message}");
        assert!(message.contains("only stdio and streamable HTTP"), "{message}");
        assert!(message.contains("\"type\": \"http\""), "{message}");
    }

    #[test]
    fn malformed_documents() {
        assert!(matches!(import_servers("{\"mcpServers\": "), Err(McpError::NotJson { .. })));
        assert!(matches!(import_servers("[]"), Err(McpError::BadShape { .. })));
        assert!(matches!(import_servers(r#"{"mcpServers": {}}"#), Err(McpError::NoServers)));
        assert!(matches!(import_servers("{}"), Err(McpError::NoServers)));
        assert!(matches!(import_servers(r#"{"mcpServers": []}"#), Err(McpError::BadShape { .. })));
        let one_entry = import_servers(r#"{"command": "npx", "args": []}"#).unwrap_err().to_string();
        assert!(one_entry.contains("without its name"), "{one_entry}");
    }

    #[test]
    fn malformed_entries_name_the_entry_and_the_field() {
        let cases = [
            (r#"{"mcpServers": {"a": "npx"}}"#, "not an object"),
            (r#"{"mcpServers": {"a": {}}}"#, "neither `command`"),
            (r#"{"mcpServers": {"a": {"command": "x", "url": "http://h/mcp"}}}"#, "both `command` and `url`"),
            (r#"{"mcpServers": {"a": {"command": ""}}}"#, "`command` is empty"),
            (r#"{"mcpServers": {"a": {"command": ["npx"]}}}"#, "`command` is a list"),
            (r#"{"mcpServers": {"a": {"command": "x", "args": "-y"}}}"#, "`args` is a string"),
            (r#"{"mcpServers": {"a": {"command": "x", "args": ["-y", {}]}}}"#, "`args[1]` is an object"),
            (r#"{"mcpServers": {"a": {"command": "x", "env": ["K=V"]}}}"#, "`env` is a list"),
            (r#"{"mcpServers": {"a": {"command": "x", "env": {"K": null}}}}"#, "`env.K` is null"),
            (r#"{"mcpServers": {"a": {"command": "x", "type": "http"}}}"#, "`type` is \"http\""),
            (r#"{"mcpServers": {"a": {"url": "ftp://h/mcp"}}}"#, "uses `ftp:`"),
            (r#"{"mcpServers": {"a": {"url": "not a url"}}}"#, "is not valid"),
            (r#"{"mcpServers": {"a": {"url": "http://h/mcp", "type": "websocket"}}}"#, "`type` is \"websocket\""),
            (r#"{"mcpServers": {"a": {"url": "http://h/mcp", "headers": {"X": 1.5, "Y": []}}}}"#, "`headers.Y` is a list"),
            (r#"{"mcpServers": {"a": {"url": "http://h/mcp", "type": 3}}}"#, "`type` is a number"),
        ];
        for (json, expected) in cases {
            let message = entry_error(json);
            assert!(message.starts_with("MCP server `a`: "), "{json}: {message}");
            assert!(message.contains(expected), "{json}: {message}");
        }
    }

    #[test]
    fn errors_and_debug_never_show_secret_values() {
        let message = entry_error(r#"{"mcpServers": {"a": {"command": "x", "env": {"TOKEN": "s3cret", "B": {}}}}}"#);
        assert!(!message.contains("s3cret"), "{message}");
        let spec =
            import_servers(r#"{"a": {"url": "http://me:pw@h/mcp?key=s3cret", "headers": {"Authorization": "Bearer s3cret"}}}"#).unwrap();
        let debug = format!("{spec:?}");
        assert!(debug.contains("Authorization") && debug.contains("http://h/mcp") && !debug.contains("s3cret"), "{debug}");
        assert!(!debug.contains("pw"), "{debug}");
    }

    #[test]
    fn jsonc_keeps_strings_and_positions() {
        assert_eq!(strip_jsonc(r#"{"a": "x,}", /* c */ "b": [1,] }"#), r#"{"a": "x,}",         "b": [1 ] }"#);
        assert_eq!(strip_jsonc("{\"a\": \"\\\"//\"} // end"), "{\"a\": \"\\\"//\"}       ");
    }
}
