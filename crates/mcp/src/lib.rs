//! Confab's MCP host: it runs the Model Context Protocol servers the user configured and calls
//! their tools for the chat, with the official Rust SDK (`rmcp`, client side).
//!
//! - [`config`]: a server's [`ServerSpec`] (stdio command or streamable HTTP URL, secrets
//!   already resolved by the app) and [`import_servers`], which reads the `mcpServers` JSON
//!   other MCP hosts write.
//! - [`host`]: [`McpHost`], one supervisor task per server on the host's own runtime thread. It
//!   spawns a stdio server in its own process group with stderr captured (the last lines kept
//!   for the status), or connects over HTTP; lists the tools (all pages, again on
//!   `tools/list_changed`); notices an exit at once; stops by SIGTERM then SIGKILL to the group.
//!   [`McpHost::call`] ends on the answer, a timeout, the caller's cancel or the server's exit.
//! - [`output`]: the result as text and images, text cut at [`MAX_RESULT_TEXT`] with a note.
//! - [`error`]: errors with messages that say what to do (never secret values).
//!
//! The library knows nothing of settings storage, secrets or the UI.

pub mod config;
pub mod error;
/// For the fuzz targets (crates/fuzz) only.
#[doc(hidden)]
pub mod fuzzing;
pub mod host;
pub mod output;

pub use config::{import_servers, ServerSpec, Transport};
pub use error::{CallError, McpError, Readiness, ServerRemedy};
pub use host::{McpHost, ServerState, ServerStatus, ToolInfo, STARTUP_TIMEOUT, STDERR_TAIL_LINES};
pub use output::{OutputPart, ToolOutput, MAX_RESULT_TEXT};
