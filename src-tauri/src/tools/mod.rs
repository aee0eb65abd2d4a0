//! MCP tool servers the user adds in Settings › Tools and the tools they offer (`servers`), and a
//! tool call as the model makes it and the user answers it (`call`). The rounds that run calls
//! within a reply are part of the chat turn (`crate::chat::tool_rounds`).

pub mod call;
pub mod servers;
