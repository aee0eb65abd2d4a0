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

/// Why a tool call gave no result.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CallError {
    #[error("There is no MCP server named `{server}`. Add it in Settings › Tools, or check the name.")]
    UnknownServer { server: String },
    #[error("The MCP server `{server}` {state}, so its tools cannot be called now. {hint}")]
    NotReady { server: String, state: String, hint: String },
    #[error("The MCP server `{server}` has no tool named `{tool}` (it has: {available}). Call one of those.")]
    UnknownTool { server: String, tool: String, available: String },
    #[error("The tool `{tool}` of the MCP server `{server}` did not answer within {} s; the call was cancelled. Try again, or raise the tool timeout in Settings › Tools.", waited.as_secs_f64())]
    Timeout { server: String, tool: String, waited: Duration },
    #[error("The tool call was stopped.")]
    Cancelled,
    #[error(
        "The MCP server `{server}` exited during the call to `{tool}`{}. Restart it in Settings › Tools.",
        stderr_summary(stderr_tail)
    )]
    ServerExited { server: String, tool: String, stderr_tail: Vec<String> },
    #[error("The MCP server `{server}` answered the call to `{tool}` with an error: {detail}")]
    Protocol { server: String, tool: String, detail: String },
}

fn stderr_summary(tail: &[String]) -> String {
    match tail.last() {
        Some(line) => format!(" (its last output: {line})"),
        None => String::new(),
    }
}
