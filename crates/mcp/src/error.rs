//! What can go wrong importing server settings and calling tools, each with a message that says
//! what to do. Messages never carry environment values or header values (they may be secrets).

use std::time::Duration;

use thiserror::Error;

/// A malformed `mcpServers` document or server entry.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum McpError {
    #[error("The MCP settings are not valid JSON ({detail}). Paste the whole file, such as {{\"mcpServers\": {{\"files\": {{\"command\": \"npx\", \"args\": [\"-y\", \"@modelcontextprotocol/server-filesystem\", \"/tmp\"]}}}}}}.")]
    NotJson { detail: String },
    #[error("The MCP settings hold no servers. Paste an object such as {{\"mcpServers\": {{\"name\": {{\"command\": \"...\"}}}}}}.")]
    NoServers,
    #[error("The MCP settings {what}. Paste an object such as {{\"mcpServers\": {{\"name\": {{\"command\": \"...\"}}}}}}.")]
    BadShape { what: String },
    #[error("MCP server `{server}`: {problem}")]
    BadEntry { server: String, problem: String },
}

/// Why a tool call gave no result. `Display` says what to do in neutral words; a front door
/// names where it is done (`describe`: the app's pane for tool servers).
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CallError {
    #[error("{}", unknown_server(server, &ServerRemedy::AddServer.to_string()))]
    UnknownServer { server: String },
    #[error("{}", not_ready(server, state, readiness, &|r| r.to_string()))]
    NotReady { server: String, state: String, readiness: Readiness },
    #[error("The MCP server `{server}` has no tool named `{tool}` (it has: {available}). Call one of those.")]
    UnknownTool { server: String, tool: String, available: String },
    #[error("{}", timeout(server, tool, *waited, &ServerRemedy::RaiseTimeout.to_string()))]
    Timeout { server: String, tool: String, waited: Duration },
    #[error("The tool call was stopped.")]
    Cancelled,
    #[error("{}", exited(server, tool, stderr_tail, &ServerRemedy::RestartServer.to_string()))]
    ServerExited { server: String, tool: String, stderr_tail: Vec<String> },
    #[error("The MCP server `{server}` answered the call to `{tool}` with an error: {detail}")]
    Protocol { server: String, tool: String, detail: String },
}

/// What a server that is not ready needs before its tools take calls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Readiness {
    /// It is starting: wait.
    Starting,
    /// It failed (`error` says how): restart it.
    Failed { error: String },
    /// It is stopped: start it.
    Stopped,
}

/// What a person can do about a tool server, in neutral words (`Display`, a sentence's start);
/// the app names the pane where it is done.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerRemedy {
    AddServer,
    StartServer,
    RestartServer,
    RaiseTimeout,
}

impl std::fmt::Display for ServerRemedy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ServerRemedy::AddServer => "Add it",
            ServerRemedy::StartServer => "Start it",
            ServerRemedy::RestartServer => "Restart it",
            ServerRemedy::RaiseTimeout => "raise the tool timeout",
        })
    }
}

impl CallError {
    /// The message, each [`ServerRemedy`] in a front door's `words`; the same as `to_string`
    /// for errors without one.
    pub fn describe(&self, words: &dyn Fn(ServerRemedy) -> String) -> String {
        match self {
            CallError::UnknownServer { server } => unknown_server(server, &words(ServerRemedy::AddServer)),
            CallError::NotReady { server, state, readiness } => not_ready(server, state, readiness, words),
            CallError::Timeout { server, tool, waited } => timeout(server, tool, *waited, &words(ServerRemedy::RaiseTimeout)),
            CallError::ServerExited { server, tool, stderr_tail } => exited(server, tool, stderr_tail, &words(ServerRemedy::RestartServer)),
            other => other.to_string(),
        }
    }
}

fn unknown_server(server: &str, add: &str) -> String {
    format!("There is no MCP server named `{server}`. {add}, or check the name.")
}

fn not_ready(server: &str, state: &str, readiness: &Readiness, words: &dyn Fn(ServerRemedy) -> String) -> String {
    let hint = match readiness {
        Readiness::Starting => "Wait until it is ready.".to_string(),
        Readiness::Failed { error } => format!("{error} {}.", words(ServerRemedy::RestartServer)),
        Readiness::Stopped => format!("{}.", words(ServerRemedy::StartServer)),
    };
    format!("The MCP server `{server}` {state}, so its tools cannot be called now. {hint}")
}

fn timeout(server: &str, tool: &str, waited: Duration, raise: &str) -> String {
    format!(
        "The tool `{tool}` of the MCP server `{server}` did not answer within {} s; the call was cancelled. Try again, or {raise}.",
        waited.as_secs_f64()
    )
}

fn exited(server: &str, tool: &str, stderr_tail: &[String], restart: &str) -> String {
    format!("The MCP server `{server}` exited during the call to `{tool}`{}. {restart}.", stderr_summary(stderr_tail))
}

fn stderr_summary(tail: &[String]) -> String {
    match tail.last() {
        Some(line) => format!(" (its last output: {line})"),
        None => String::new(),
    }
}
