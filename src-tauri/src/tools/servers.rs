//! MCP servers the user adds in Settings › Tools, and the tools they offer to chats.
//!
//! The list (names, commands, URLs, the names of environment variables and headers, the
//! switches per server and per tool, the tools allowed always) is one JSON value in the store.
//! Environment values and header values are secrets: they live in the secret store under
//! `tool-server:<id>:env:<NAME>` / `tool-server:<id>:header:<NAME>`, never in SQLite, a log,
//! or anything sent to the page (which only learns which names have a value). A server runs
//! only while it is switched on; the MCP host (`confab_mcp`) knows it by its name (unique, so
//! that the host's messages name it as the user does).

use std::collections::BTreeMap;
use std::path::PathBuf;

use confab_mcp::{McpHost, ServerSpec, ServerState, ServerStatus, Transport};
use confab_secrets::SecretStore;
use confab_store::Store;

/// The store's key for the server list.
const KEY: &str = "tool_servers";
/// The longest server name: enough for any real one, short enough for a tool card.
const MAX_NAME_CHARS: usize = 60;

fn secret_name(server: u32, kind: SecretKind, name: &str) -> String {
    let kind = match kind {
        SecretKind::Env => "env",
        SecretKind::Header => "header",
    };
    format!("tool-server:{server}:{kind}:{name}")
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum SecretKind {
    Env,
    Header,
}

/// What is saved (without any secret value).
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default)]
pub struct ToolServers {
    pub servers: Vec<ToolServer>,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ToolServer {
    pub id: u32,
    pub name: String,
    /// Off: the server is not started and its tools are not offered.
    pub enabled: bool,
    pub transport: SavedTransport,
    /// Tools the user switched off (all others are offered).
    #[serde(default)]
    pub disabled_tools: Vec<String>,
    /// Tools the user allowed "always": their calls run without asking.
    #[serde(default)]
    pub always_allowed: Vec<String>,
}

/// How a server is reached; environment variables and headers by name only.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum SavedTransport {
    Stdio { command: String, args: Vec<String>, env: Vec<String>, cwd: Option<PathBuf> },
    Http { url: String, headers: Vec<String> },
}

/// A server as the page sees it: no secret values, with what the host says of it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ToolServerView {
    pub id: u32,
    pub name: String,
    pub enabled: bool,
    pub transport: SavedTransport,
    pub state: ToolServerState,
    /// Why it failed, for `failed`.
    pub error: Option<String>,
    /// The last lines it wrote to stderr (a stdio server), secret values masked.
    pub stderr_tail: Vec<String>,
    pub tools: Vec<ToolView>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, ts_rs::TS)]
#[serde(rename_all = "snake_case")]
pub enum ToolServerState {
    Off,
    Starting,
    Ready,
    Failed,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ToolView {
    pub name: String,
    pub description: Option<String>,
    pub enabled: bool,
    pub always_allowed: bool,
}

#[derive(Debug, Clone, PartialEq, serde::Serialize, ts_rs::TS)]
pub struct ToolServersView {
    pub servers: Vec<ToolServerView>,
    /// Where environment values and headers are kept, in words.
    pub secret_store: String,
}

/// A server as the settings pane sends it.
#[derive(Debug, Clone, serde::Deserialize, ts_rs::TS)]
pub struct ToolServerInput {
    pub id: Option<u32>,
    pub name: String,
    pub transport: TransportInput,
}

#[derive(Debug, Clone, serde::Deserialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TransportInput {
    Stdio { command: String, args: Vec<String>, env: Vec<SecretInput>, cwd: Option<String> },
    Http { url: String, headers: Vec<SecretInput> },
}

/// An environment variable or header. `value`: `None` keeps the saved one.
#[derive(Debug, Clone, serde::Deserialize, ts_rs::TS)]
pub struct SecretInput {
    pub name: String,
    pub value: Option<String>,
}

/// A tool offered to the model in one reply: the name the model calls it by (the tool's own,
/// or prefixed by its server's when two servers offer the same name) and where it runs.
#[derive(Debug, Clone, PartialEq)]
pub struct OfferedTool {
    pub called: String,
    pub server_id: u32,
    pub server: String,
    pub tool: String,
    pub description: Option<String>,
    pub input_schema: serde_json::Value,
    pub always_allowed: bool,
}

impl OfferedTool {
    /// The tool as OpenAI's tools API (and chat templates) take it.
    pub fn definition(&self) -> serde_json::Value {
        let mut function = serde_json::json!({ "name": self.called, "parameters": self.input_schema });
        if let Some(description) = &self.description {
            function["description"] = description.clone().into();
        }
        serde_json::json!({ "type": "function", "function": function })
    }
}

impl ToolServers {
    /// The saved list; an unreadable one is empty (and says so in the log).
    pub async fn load(store: &Store) -> ToolServers {
        crate::settings::load_value(store, KEY, "tool server list").await
    }

    async fn save(&self, store: &Store) -> Result<(), String> {
        crate::settings::save_value(store, KEY, self).await
    }

    fn find(&self, id: u32) -> Result<&ToolServer, String> {
        self.servers.iter().find(|s| s.id == id).ok_or_else(|| "That tool server is gone; it may have been removed.".to_string())
    }

    fn find_mut(&mut self, id: u32) -> Result<&mut ToolServer, String> {
        self.servers.iter_mut().find(|s| s.id == id).ok_or_else(|| "That tool server is gone; it may have been removed.".to_string())
    }

    pub fn view(&self, host: &McpHost, secrets: &SecretStore) -> ToolServersView {
        let statuses: BTreeMap<String, ServerStatus> = host.status().into_iter().map(|s| (s.name.clone(), s)).collect();
        let servers = self
            .servers
            .iter()
            .map(|server| {
                let status = statuses.get(&server.name).filter(|_| server.enabled);
                let (state, error) = match status.map(|s| &s.state) {
                    None | Some(ServerState::Stopped) => (ToolServerState::Off, None),
                    Some(ServerState::Starting) => (ToolServerState::Starting, None),
                    Some(ServerState::Ready) => (ToolServerState::Ready, None),
                    Some(ServerState::Failed { error }) => (ToolServerState::Failed, Some(error.clone())),
                };
                let masks = server.secret_values(secrets);
                let tools = status
                    .map(|s| {
                        s.tools
                            .iter()
                            .map(|t| ToolView {
                                name: t.name.clone(),
                                description: t.description.clone(),
                                enabled: !server.disabled_tools.contains(&t.name),
                                always_allowed: server.always_allowed.contains(&t.name),
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                ToolServerView {
                    id: server.id,
                    name: server.name.clone(),
                    enabled: server.enabled,
                    transport: server.transport.clone(),
                    state,
                    error: error.map(|e| mask(&e, &masks)),
                    stderr_tail: status.map(|s| s.stderr_tail.iter().map(|line| mask(line, &masks)).collect()).unwrap_or_default(),
                    tools,
                }
            })
            .collect();
        ToolServersView { servers, secret_store: secrets.describe() }
    }

    /// Adds or edits a server: secret values to the secret store, the rest to SQLite. Returns
    /// its id. An enabled server is restarted with what changed.
    pub async fn put(&mut self, input: ToolServerInput, store: &Store, secrets: &SecretStore) -> Result<u32, String> {
        let name = input.name.split_whitespace().collect::<Vec<_>>().join(" ");
        if name.is_empty() {
            return Err("Give the tool server a name, such as \"files\" or \"search\".".into());
        }
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(format!("The tool server's name is too long; keep it under {MAX_NAME_CHARS} characters."));
        }
        if self.servers.iter().any(|s| s.name.eq_ignore_ascii_case(&name) && Some(s.id) != input.id) {
            return Err(format!("There is already a tool server named \"{name}\"; give this one another name."));
        }
        let (transport, values, kind) = match input.transport {
            TransportInput::Stdio { command, args, env, cwd } => {
                let command = command.trim().to_string();
                if command.is_empty() {
                    return Err("Give the command that starts the server, such as npx or uvx.".into());
                }
                let cwd = cwd.map(|c| c.trim().to_string()).filter(|c| !c.is_empty()).map(PathBuf::from);
                if let Some(folder) = cwd.as_ref().filter(|f| !f.is_absolute()) {
                    return Err(format!("The working folder \"{}\" must be a full path.", folder.display()));
                }
                let names = check_names(&env, "environment variable")?;
                (SavedTransport::Stdio { command, args, env: names, cwd }, env, SecretKind::Env)
            }
            TransportInput::Http { url, headers } => {
                let url = url.trim().to_string();
                check_url(&url)?;
                let names = check_names(&headers, "header")?;
                (SavedTransport::Http { url, headers: names }, headers, SecretKind::Header)
            }
        };

        let mut next = self.clone();
        let id = match input.id {
            Some(id) => {
                let server = next.find_mut(id)?;
                let old_names = server.secret_names();
                server.name = name;
                server.transport = transport;
                // Values of names no longer listed go.
                for (old_kind, old) in old_names {
                    if !server.secret_names().contains(&(old_kind, old.clone())) {
                        secrets.delete(&secret_name(id, old_kind, &old)).map_err(|e| e.to_string())?;
                    }
                }
                id
            }
            None => {
                let id = next.servers.iter().map(|s| s.id).max().unwrap_or(0) + 1;
                next.servers.push(ToolServer {
                    id,
                    name,
                    enabled: true,
                    transport,
                    disabled_tools: Vec::new(),
                    always_allowed: Vec::new(),
                });
                id
            }
        };
        for secret in values {
            if let Some(value) = secret.value {
                secrets.set(&secret_name(id, kind, secret.name.trim()), &value).map_err(|e| e.to_string())?;
            }
        }
        next.save(store).await?;
        *self = next;
        Ok(id)
    }

    /// Adds the servers of an `mcpServers` JSON (as Claude Desktop, Cursor, LM Studio and VS
    /// Code write it), switched off: a pasted command runs only once the user turns it on.
    /// A name already taken gets a number. Returns how many were added.
    pub async fn import(&mut self, json: &str, store: &Store, secrets: &SecretStore) -> Result<usize, String> {
        let specs = confab_mcp::import_servers(json).map_err(|e| e.to_string())?;
        if specs.is_empty() {
            return Err("That JSON lists no servers; paste an object with \"mcpServers\".".into());
        }
        let mut next = self.clone();
        let added = specs.len();
        for spec in specs {
            let base = spec.name.split_whitespace().collect::<Vec<_>>().join(" ");
            let base: String = if base.is_empty() { "server".into() } else { base.chars().take(MAX_NAME_CHARS - 4).collect() };
            let mut name = base.clone();
            let mut n = 2;
            while next.servers.iter().any(|s| s.name.eq_ignore_ascii_case(&name)) {
                name = format!("{base} {n}");
                n += 1;
            }
            let (transport, values, kind) = match spec.transport {
                Transport::Stdio { command, args, env, cwd } => {
                    (SavedTransport::Stdio { command, args, env: env.keys().cloned().collect(), cwd }, env, SecretKind::Env)
                }
                Transport::Http { url, headers } => {
                    (SavedTransport::Http { url, headers: headers.keys().cloned().collect() }, headers, SecretKind::Header)
                }
            };
            let id = next.servers.iter().map(|s| s.id).max().unwrap_or(0) + 1;
            for (key, value) in values {
                secrets.set(&secret_name(id, kind, &key), &value).map_err(|e| e.to_string())?;
            }
            next.servers.push(ToolServer { id, name, enabled: false, transport, disabled_tools: Vec::new(), always_allowed: Vec::new() });
        }
        next.save(store).await?;
        *self = next;
        Ok(added)
    }

    /// Removes a server and its secrets.
    pub async fn remove(&mut self, id: u32, store: &Store, secrets: &SecretStore) -> Result<(), String> {
        let server = self.find(id)?.clone();
        for (kind, name) in server.secret_names() {
            secrets.delete(&secret_name(id, kind, &name)).map_err(|e| e.to_string())?;
        }
        let mut next = self.clone();
        next.servers.retain(|s| s.id != id);
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    pub async fn set_enabled(&mut self, id: u32, enabled: bool, store: &Store) -> Result<(), String> {
        let mut next = self.clone();
        next.find_mut(id)?.enabled = enabled;
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// Switches one tool of a server on or off for chats.
    pub async fn set_tool_enabled(&mut self, id: u32, tool: &str, enabled: bool, store: &Store) -> Result<(), String> {
        let mut next = self.clone();
        let server = next.find_mut(id)?;
        server.disabled_tools.retain(|t| t != tool);
        if !enabled {
            server.disabled_tools.push(tool.to_string());
        }
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// Calls of this tool run without asking from now on (`true`), or ask again (`false`).
    pub async fn set_always_allowed(&mut self, id: u32, tool: &str, always: bool, store: &Store) -> Result<(), String> {
        let mut next = self.clone();
        let server = next.find_mut(id)?;
        server.always_allowed.retain(|t| t != tool);
        if always {
            server.always_allowed.push(tool.to_string());
        }
        next.save(store).await?;
        *self = next;
        Ok(())
    }

    /// What the host is given to start server `id`: its transport with the secret values.
    pub fn spec(&self, id: u32, secrets: &SecretStore) -> Result<ServerSpec, String> {
        let server = self.find(id)?;
        let resolve = |kind: SecretKind, names: &[String]| -> Result<BTreeMap<String, String>, String> {
            let mut values = BTreeMap::new();
            for name in names {
                let value = secrets.get(&secret_name(id, kind, name)).map_err(|e| e.to_string())?;
                values.insert(name.clone(), value.unwrap_or_default());
            }
            Ok(values)
        };
        let transport = match &server.transport {
            SavedTransport::Stdio { command, args, env, cwd } => {
                Transport::Stdio { command: command.clone(), args: args.clone(), env: resolve(SecretKind::Env, env)?, cwd: cwd.clone() }
            }
            SavedTransport::Http { url, headers } => Transport::Http { url: url.clone(), headers: resolve(SecretKind::Header, headers)? },
        };
        Ok(ServerSpec { name: server.name.clone(), transport })
    }

    /// Starts every enabled server that is not running, and stops every one that is off.
    pub async fn apply(&self, host: &McpHost, secrets: &SecretStore) {
        let running: BTreeMap<String, ServerState> = host.status().into_iter().map(|s| (s.name, s.state)).collect();
        for server in &self.servers {
            let state = running.get(&server.name);
            if server.enabled && matches!(state, None | Some(ServerState::Stopped)) {
                self.start(server.id, host, secrets);
            } else if !server.enabled && state.is_some_and(|s| !matches!(s, ServerState::Stopped)) {
                host.stop(&server.name).await;
            }
        }
        // Servers removed from the list, or renamed.
        for name in running.keys() {
            if !self.servers.iter().any(|s| &s.name == name) {
                host.remove(name).await;
            }
        }
    }

    /// (Re)starts server `id`; a secret that cannot be read is logged and the server not started.
    pub fn start(&self, id: u32, host: &McpHost, secrets: &SecretStore) {
        match self.spec(id, secrets) {
            Ok(spec) => host.start(spec),
            Err(e) => tracing::warn!(server = id, "could not read the tool server's secrets: {e}"),
        }
    }

    /// The tools a reply offers: those of enabled, ready servers that are switched on. Names
    /// taken by two servers are prefixed with their server's name.
    pub fn offered(&self, host: &McpHost) -> Vec<OfferedTool> {
        let statuses: BTreeMap<String, ServerStatus> = host.status().into_iter().map(|s| (s.name.clone(), s)).collect();
        let mut offered = Vec::new();
        for server in self.servers.iter().filter(|s| s.enabled) {
            let Some(status) = statuses.get(&server.name).filter(|s| s.state == ServerState::Ready) else { continue };
            for tool in status.tools.iter().filter(|t| !server.disabled_tools.contains(&t.name)) {
                offered.push(OfferedTool {
                    called: tool.name.clone(),
                    server_id: server.id,
                    server: server.name.clone(),
                    tool: tool.name.clone(),
                    description: tool.description.clone(),
                    input_schema: tool.input_schema.clone(),
                    always_allowed: server.always_allowed.contains(&tool.name),
                });
            }
        }
        let taken_twice: Vec<String> =
            offered.iter().filter(|t| offered.iter().filter(|o| o.tool == t.tool).count() > 1).map(|t| t.tool.clone()).collect();
        for tool in offered.iter_mut().filter(|t| taken_twice.contains(&t.tool)) {
            tool.called = function_name(&format!("{}_{}", tool.server, tool.tool));
        }
        offered
    }
}

impl ToolServer {
    fn secret_names(&self) -> Vec<(SecretKind, String)> {
        match &self.transport {
            SavedTransport::Stdio { env, .. } => env.iter().map(|n| (SecretKind::Env, n.clone())).collect(),
            SavedTransport::Http { headers, .. } => headers.iter().map(|n| (SecretKind::Header, n.clone())).collect(),
        }
    }

    /// The values to mask in what the page is shown (stderr, errors).
    fn secret_values(&self, secrets: &SecretStore) -> Vec<String> {
        self.secret_names()
            .into_iter()
            .filter_map(|(kind, name)| secrets.get(&secret_name(self.id, kind, &name)).ok().flatten())
            .filter(|v| v.len() >= 4)
            .collect()
    }
}

/// `text` with every secret value replaced by dots.
fn mask(text: &str, secrets: &[String]) -> String {
    secrets.iter().fold(text.to_string(), |text, secret| text.replace(secret.as_str(), "••••"))
}

/// A function name as OpenAI's API accepts it: letters, digits, `_` and `-`, at most 64.
fn function_name(text: &str) -> String {
    text.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).take(64).collect()
}

fn check_names(entries: &[SecretInput], what: &str) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for entry in entries {
        let name = entry.name.trim();
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c == '=' || c == ':' || c.is_control()) {
            return Err(format!("\"{name}\" is not a valid {what} name; use letters, digits and _ or -."));
        }
        if names.iter().any(|n: &String| n == name) {
            return Err(format!("The {what} {name} is listed twice."));
        }
        names.push(name.to_string());
    }
    Ok(names)
}

fn check_url(url: &str) -> Result<(), String> {
    let ok =
        (url.starts_with("http://") || url.starts_with("https://")) && url.len() > "http://".len() && !url.contains(char::is_whitespace);
    if ok {
        Ok(())
    } else {
        Err(format!("\"{url}\" is not a server URL; give the full address, such as http://localhost:3000/mcp."))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TOKEN: &str = "ghp-secret-token-5e1d77";

    fn database_bytes(dir: &std::path::Path) -> Vec<u8> {
        ["confab.db", "confab.db-wal"].iter().filter_map(|f| std::fs::read(dir.join(f)).ok()).flatten().collect()
    }

    fn contains(haystack: &[u8], needle: &str) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle.as_bytes())
    }

    fn stdio(name: &str, env: Vec<SecretInput>) -> ToolServerInput {
        ToolServerInput {
            id: None,
            name: name.into(),
            transport: TransportInput::Stdio { command: "npx".into(), args: vec!["-y".into(), "server".into()], env, cwd: None },
        }
    }

    #[test]
    fn servers_persist_without_their_secrets_which_go_to_the_secret_store() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        let host = McpHost::new();
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut servers = ToolServers::load(&store).await;
            let env = vec![SecretInput { name: "GITHUB_TOKEN".into(), value: Some(TOKEN.into()) }];
            let id = servers.put(stdio(" git  hub ", env), &store, &secrets).await.unwrap();
            assert!(!contains(&database_bytes(dir.path()), TOKEN), "the value is nowhere in the database");
            assert_eq!(secrets.get("tool-server:1:env:GITHUB_TOKEN").unwrap().as_deref(), Some(TOKEN));
            let view = servers.view(&host, &secrets);
            assert!(!serde_json::to_string(&view).unwrap().contains(TOKEN), "the page never gets the value");
            assert_eq!(view.servers[0].name, "git hub");
            match servers.spec(id, &secrets).unwrap().transport {
                Transport::Stdio { env, .. } => assert_eq!(env.get("GITHUB_TOKEN").map(String::as_str), Some(TOKEN)),
                other => panic!("{other:?}"),
            }

            // An edit without the value keeps it; a name no longer listed loses its value.
            let keep = vec![SecretInput { name: "GITHUB_TOKEN".into(), value: None }];
            servers.put(ToolServerInput { id: Some(id), ..stdio("github", keep) }, &store, &secrets).await.unwrap();
            assert_eq!(secrets.get("tool-server:1:env:GITHUB_TOKEN").unwrap().as_deref(), Some(TOKEN), "kept");
            servers.put(ToolServerInput { id: Some(id), ..stdio("github", vec![]) }, &store, &secrets).await.unwrap();
            assert_eq!(secrets.get("tool-server:1:env:GITHUB_TOKEN").unwrap(), None, "dropped with its name");
            assert_eq!(ToolServers::load(&store).await, servers);

            servers.remove(id, &store, &secrets).await.unwrap();
            assert!(servers.servers.is_empty());
        });
    }

    #[test]
    fn imported_servers_arrive_switched_off_with_their_secrets_apart() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        let json = format!(
            r#"{{"mcpServers": {{
                "files": {{"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]}},
                "remote": {{"url": "https://example.com/mcp", "headers": {{"Authorization": "Bearer {TOKEN}"}}}}
            }}}}"#
        );
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut servers = ToolServers::default();
            servers.put(stdio("files", vec![]), &store, &secrets).await.unwrap();
            assert_eq!(servers.import(&json, &store, &secrets).await.unwrap(), 2);
            let names: Vec<_> = servers.servers.iter().map(|s| (s.name.as_str(), s.enabled)).collect();
            assert_eq!(names, [("files", true), ("files 2", false), ("remote", false)], "a taken name gets a number; imports start off");
            assert!(!contains(&database_bytes(dir.path()), TOKEN));
            assert!(servers.import("{not json", &store, &secrets).await.is_err());
        });
    }

    #[test]
    fn bad_input_says_what_to_fix_and_changes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let secrets = SecretStore::file(dir.path());
        tauri::async_runtime::block_on(async {
            let store = Store::open(dir.path().join("confab.db")).await.unwrap();
            let mut servers = ToolServers::default();
            assert!(servers.put(stdio(" ", vec![]), &store, &secrets).await.unwrap_err().contains("name"));
            let no_command = ToolServerInput {
                transport: TransportInput::Stdio { command: " ".into(), args: vec![], env: vec![], cwd: None },
                ..stdio("a", vec![])
            };
            assert!(servers.put(no_command, &store, &secrets).await.unwrap_err().contains("command"));
            let bad_env = vec![SecretInput { name: "A B".into(), value: Some("x".into()) }];
            assert!(servers.put(stdio("a", bad_env), &store, &secrets).await.unwrap_err().contains("environment variable"));
            let bad_url =
                ToolServerInput { transport: TransportInput::Http { url: "localhost:3000".into(), headers: vec![] }, ..stdio("a", vec![]) };
            assert!(servers.put(bad_url, &store, &secrets).await.unwrap_err().contains("http://"));
            servers.put(stdio("a", vec![]), &store, &secrets).await.unwrap();
            assert!(servers.put(stdio("A", vec![]), &store, &secrets).await.unwrap_err().contains("already"));
            assert_eq!(servers.servers.len(), 1);
        });
    }

    #[test]
    fn secrets_are_masked_in_what_the_page_sees() {
        assert_eq!(mask(&format!("auth failed for {TOKEN}!"), &[TOKEN.to_string()]), "auth failed for ••••!");
        assert_eq!(function_name("my files_read file"), "my_files_read_file");
    }
}
