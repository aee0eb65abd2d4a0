//! MCP tool servers in Settings › Tools, and the user's decisions on tool calls in a chat. The
//! page gets each server without its secret values: only the names of its environment
//! variables and headers.

use tauri::{AppHandle, Emitter};

use super::App;
use crate::chat::tool_rounds;
use crate::failure::Failure;
use crate::tools::call::ToolDecisionInput;
use crate::tools::servers::{ToolServerInput, ToolServersView};
use confab_store::MessageId;

/// Sent with the servers' view whenever one starts, becomes ready, fails or stops.
pub const EVENT: &str = "tool-servers";

#[tauri::command]
pub async fn list_tool_servers(state: App<'_>) -> Result<ToolServersView, Failure> {
    Ok(state.tool_servers.lock().await.view(&state.mcp, &state.secrets))
}

/// Adds (no id) or edits a server; an enabled one (re)starts with the change.
#[tauri::command]
pub async fn save_tool_server(state: App<'_>, server: ToolServerInput) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    let id = servers.put(server, &state.store, &state.secrets).await?;
    if servers.servers.iter().any(|s| s.id == id && s.enabled) {
        servers.start(id, &state.mcp, &state.secrets);
    }
    // A renamed server's old process stops.
    servers.apply(&state.mcp, &state.secrets).await;
    Ok(servers.view(&state.mcp, &state.secrets))
}

#[tauri::command]
pub async fn remove_tool_server(state: App<'_>, id: u32) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    servers.remove(id, &state.store, &state.secrets).await?;
    servers.apply(&state.mcp, &state.secrets).await;
    Ok(servers.view(&state.mcp, &state.secrets))
}

/// Pastes an `mcpServers` JSON: its servers are added switched off.
#[tauri::command]
pub async fn import_tool_servers(state: App<'_>, json: String) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    servers.import(&json, &state.store, &state.secrets).await?;
    Ok(servers.view(&state.mcp, &state.secrets))
}

/// On: the server starts and its tools are offered to chats. Off: it stops.
#[tauri::command]
pub async fn set_tool_server_enabled(state: App<'_>, id: u32, enabled: bool) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    servers.set_enabled(id, enabled, &state.store).await?;
    servers.apply(&state.mcp, &state.secrets).await;
    Ok(servers.view(&state.mcp, &state.secrets))
}

#[tauri::command]
pub async fn restart_tool_server(state: App<'_>, id: u32) -> Result<ToolServersView, Failure> {
    let servers = state.tool_servers.lock().await;
    if !servers.servers.iter().any(|s| s.id == id && s.enabled) {
        return Err("Turn the server on to start it.".into());
    }
    servers.start(id, &state.mcp, &state.secrets);
    Ok(servers.view(&state.mcp, &state.secrets))
}

/// One tool of a server, offered to chats or not.
#[tauri::command]
pub async fn set_tool_enabled(state: App<'_>, id: u32, tool: String, enabled: bool) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    servers.set_tool_enabled(id, &tool, enabled, &state.store).await?;
    Ok(servers.view(&state.mcp, &state.secrets))
}

/// Calls of this tool run without asking (`true`), or ask each time (`false`).
#[tauri::command]
pub async fn set_tool_always_allowed(state: App<'_>, id: u32, tool: String, always: bool) -> Result<ToolServersView, Failure> {
    let mut servers = state.tool_servers.lock().await;
    servers.set_always_allowed(id, &tool, always, &state.store).await?;
    Ok(servers.view(&state.mcp, &state.secrets))
}

/// The user's decision on a tool call waiting in a reply (its card's buttons).
#[tauri::command]
pub async fn decide_tool_call(state: App<'_>, reply: MessageId, position: u32, decision: ToolDecisionInput) -> Result<(), Failure> {
    if tool_rounds::decide(&state, reply, position, decision) {
        Ok(())
    } else {
        Err("That tool call is no longer waiting; its reply was stopped.".into())
    }
}

/// Starts the enabled servers, and tells the window whenever a server's state changes.
pub fn start_at_launch(app: AppHandle, state: std::sync::Arc<crate::state::AppState>) {
    tauri::async_runtime::spawn(async move {
        state.tool_servers.lock().await.apply(&state.mcp, &state.secrets).await;
        let mut changes = state.mcp.changes();
        while changes.changed().await.is_ok() {
            let view = state.tool_servers.lock().await.view(&state.mcp, &state.secrets);
            let _ = app.emit(EVENT, view);
        }
    });
}
