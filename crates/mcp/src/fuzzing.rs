//! For the fuzz targets (`crates/fuzz`) only: one line a server sends, read as the host reads it.

use rmcp::model::{CallToolResult, JsonRpcMessage, ListToolsResult, ServerJsonRpcMessage, ServerResult};

use crate::host::ToolInfo;
use crate::output::{tool_output, ToolOutput};

/// What the host makes of a line: the JSON-RPC message (as rmcp's transports parse it), a tool
/// result as the chat reads it, a tool list as the settings show it. The line's `result` is read
/// as a call's result and as a tool list too, as it would be when it answers either request.
pub fn server_line(line: &[u8]) -> (Vec<ToolOutput>, Vec<ToolInfo>) {
    let (mut outputs, mut tools) = (Vec::new(), Vec::new());
    let mut take = |result: ServerResult| match result {
        ServerResult::CallToolResult(result) => outputs.push(read_output(result)),
        ServerResult::ListToolsResult(list) => tools.extend(list.tools.into_iter().map(ToolInfo::from)),
        _ => {}
    };
    if let Ok(JsonRpcMessage::Response(response)) = serde_json::from_slice::<ServerJsonRpcMessage>(line) {
        take(response.result);
    }
    if let Ok(value) = serde_json::from_slice::<serde_json::Value>(line) {
        let result = &value["result"];
        if let Ok(result) = serde_json::from_value::<CallToolResult>(result.clone()) {
            take(ServerResult::CallToolResult(result));
        }
        if let Ok(list) = serde_json::from_value::<ListToolsResult>(result.clone()) {
            take(ServerResult::ListToolsResult(list));
        }
    }
    (outputs, tools)
}

/// The output, with what the chat reads of it.
fn read_output(result: CallToolResult) -> ToolOutput {
    let output = tool_output(result);
    let _ = (output.text(), output.images().count());
    output
}
