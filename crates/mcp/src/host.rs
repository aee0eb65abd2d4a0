//! The host: one supervisor task per server (start, list tools, watch for exit, stop), and tool
//! calls that end on the result, the timeout, the caller's cancel or the server's exit.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::future::Future;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Once, Weak};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ClientCapabilities, ClientConfig, Implementation, Tool};
use rmcp::service::{ClientInitializeError, NotificationContext, RunningService};
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::{HttpStatusError, StreamableHttpClientTransportConfig, StreamableHttpError};
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{ClientHandler, Peer, RoleClient, ServiceError, ServiceExt};
use serde_json::Value;
use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStderr};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::JoinHandle;

use crate::config::{ServerSpec, Transport};
use crate::error::{CallError, Readiness};
use crate::output::{tool_output, ToolOutput};

/// How long a server may take from launch to its tool list (npx may download a package first).
pub const STARTUP_TIMEOUT: Duration = Duration::from_secs(60);
/// Lines of a stdio server's stderr kept for its status, and the characters kept of each.
pub const STDERR_TAIL_LINES: usize = 20;
const STDERR_LINE_CHARS: usize = 500;
/// The largest JSON-RPC message read from a server, on either transport (rmcp's default is
/// 16 MiB; a tool may return more, which is then truncated rather than lost).
const MAX_MESSAGE: usize = confab_limits::MCP_MESSAGE_BYTES.as_usize();
/// How long a stopped server has between SIGTERM and SIGKILL.
const STOP_GRACE: Duration = Duration::from_secs(2);
/// After the connection drops, how long to wait for the process's exit status and last stderr.
const EXIT_SETTLE: Duration = Duration::from_secs(1);

/// A server and what it offers, as the settings show it.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerStatus {
    pub name: String,
    pub state: ServerState,
    /// Empty unless the state is Ready.
    pub tools: Vec<ToolInfo>,
    /// The last lines a stdio server wrote to stderr (oldest first).
    pub stderr_tail: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerState {
    Starting,
    Ready,
    Failed { error: String },
    Stopped,
}

impl ServerState {
    fn words(&self) -> &'static str {
        match self {
            ServerState::Starting => "is still starting",
            ServerState::Ready => "is ready",
            ServerState::Failed { .. } => "has failed",
            ServerState::Stopped => "is stopped",
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct ToolInfo {
    pub name: String,
    pub description: Option<String>,
    /// The JSON Schema of the arguments, as the server gave it.
    pub input_schema: Value,
}

impl From<Tool> for ToolInfo {
    fn from(tool: Tool) -> ToolInfo {
        ToolInfo {
            name: tool.name.into_owned(),
            description: tool.description.map(|d| d.into_owned()),
            input_schema: Value::Object((*tool.input_schema).clone()),
        }
    }
}

/// Runs MCP servers and calls their tools. Cheap to clone (an `Arc` inside); its methods work
/// from any tokio runtime, because the servers run on the host's own runtime thread. Dropping
/// the last clone kills every server's processes.
#[derive(Clone)]
pub struct McpHost {
    inner: Arc<Inner>,
}

struct Inner {
    servers: Mutex<BTreeMap<String, Entry>>,
    changes: watch::Sender<u64>,
    runtime: tokio::runtime::Handle,
    next_generation: AtomicU64,
    /// Each supervisor holds a clone; the runtime thread waits for all of them to end (their
    /// processes reaped) after the host is dropped.
    supervisors: mpsc::Sender<()>,
    /// Dropped with the host: tells the runtime thread to finish.
    _shutdown: oneshot::Sender<()>,
}

type StderrTail = Arc<Mutex<VecDeque<String>>>;

struct Entry {
    /// Tells apart the supervisors of one name across restarts: only the current one updates.
    generation: u64,
    state: ServerState,
    tools: Vec<ToolInfo>,
    stderr: StderrTail,
    /// Present while Ready.
    connection: Option<Connection>,
    /// Asks the supervisor to stop (dropping it does too); the reply comes once it has.
    stop: Option<oneshot::Sender<oneshot::Sender<()>>>,
    /// The stdio server's process group, for the kill when the host is dropped.
    process_group: Option<u32>,
}

#[derive(Clone)]
struct Connection {
    peer: Peer<RoleClient>,
    /// Closed (never sent on) when the server exits or is stopped.
    alive: watch::Receiver<()>,
    stderr: StderrTail,
}

impl Default for McpHost {
    fn default() -> Self {
        McpHost::new()
    }
}

impl McpHost {
    pub fn new() -> Self {
        let (handle_tx, handle_rx) = std::sync::mpsc::channel();
        let (shutdown_tx, shutdown_rx) = oneshot::channel::<()>();
        let (supervisors_tx, mut supervisors_rx) = mpsc::channel::<()>(1);
        std::thread::Builder::new()
            .name("confab-mcp".into())
            .spawn(move || {
                let runtime = tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                    .expect("the MCP host's tokio runtime could not be built");
                let _ = handle_tx.send(runtime.handle().clone());
                runtime.block_on(async move {
                    let _ = shutdown_rx.await;
                    // Let the supervisors kill and reap their processes (no zombies).
                    let _ = tokio::time::timeout(STOP_GRACE * 2, supervisors_rx.recv()).await;
                });
            })
            .expect("the MCP host's thread could not start");
        let runtime = handle_rx.recv().expect("the MCP host's runtime thread ended at start");
        McpHost {
            inner: Arc::new(Inner {
                servers: Mutex::new(BTreeMap::new()),
                changes: watch::Sender::new(0),
                runtime,
                next_generation: AtomicU64::new(1),
                supervisors: supervisors_tx,
                _shutdown: shutdown_tx,
            }),
        }
    }

    /// Starts (or restarts) the server named `spec.name` and returns at once: its status goes
    /// Starting, then Ready with its tools, or Failed with the error and its stderr.
    pub fn start(&self, spec: ServerSpec) {
        let generation = self.inner.next_generation.fetch_add(1, Ordering::Relaxed);
        let stderr: StderrTail = Arc::default();
        let (stop_tx, stop_rx) = oneshot::channel();
        {
            let mut servers = self.inner.lock();
            // Replacing the entry drops the old supervisor's stop sender: it kills its process.
            servers.insert(
                spec.name.clone(),
                Entry {
                    generation,
                    state: ServerState::Starting,
                    tools: Vec::new(),
                    stderr: stderr.clone(),
                    connection: None,
                    stop: Some(stop_tx),
                    process_group: None,
                },
            );
        }
        self.inner.bump();
        let supervisor = Supervisor {
            host: Arc::downgrade(&self.inner),
            name: spec.name,
            generation,
            stderr,
            _alive_token: self.inner.supervisors.clone(),
        };
        tracing::info!(server = %supervisor.name, transport = ?spec.transport, "starting MCP server");
        self.inner.runtime.spawn(supervisor.run(spec.transport, stop_rx));
    }

    /// Stops the server: its connection closes and its process group gets SIGTERM, then SIGKILL
    /// after a grace period. Returns once the process is gone; the status says Stopped.
    pub async fn stop(&self, name: &str) {
        let stop = self.inner.lock().get_mut(name).and_then(|entry| entry.stop.take());
        if let Some(stop) = stop {
            let (done_tx, done_rx) = oneshot::channel();
            if stop.send(done_tx).is_ok() {
                let _ = done_rx.await;
            }
        }
        let mut servers = self.inner.lock();
        if let Some(entry) = servers.get_mut(name) {
            entry.state = ServerState::Stopped;
            entry.tools.clear();
            entry.connection = None;
            entry.process_group = None;
            drop(servers);
            self.inner.bump();
        }
    }

    /// Stops the server and forgets it (it leaves the status list).
    pub async fn remove(&self, name: &str) {
        self.stop(name).await;
        if self.inner.lock().remove(name).is_some() {
            self.inner.bump();
        }
    }

    /// Every known server, sorted by name.
    pub fn status(&self) -> Vec<ServerStatus> {
        self.inner
            .lock()
            .iter()
            .map(|(name, entry)| ServerStatus {
                name: name.clone(),
                state: entry.state.clone(),
                tools: entry.tools.clone(),
                stderr_tail: lock(&entry.stderr).iter().cloned().collect(),
            })
            .collect()
    }

    /// Bumps on every change of state or tools. New stderr lines don't bump it (a chatty server
    /// would flood the window); [`McpHost::status`] reads them as they are, and a Failed state
    /// already holds the final ones.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.inner.changes.subscribe()
    }

    /// Calls `tool` on `server`. Ends with the result, or an error when `timeout` passes, when
    /// `cancel` completes (the Stop button), or as soon as the server exits. On timeout and
    /// cancel the server gets `notifications/cancelled` and stays usable.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        arguments: serde_json::Map<String, Value>,
        timeout: Duration,
        cancel: impl Future<Output = ()>,
    ) -> Result<ToolOutput, CallError> {
        let connection = {
            let servers = self.inner.lock();
            let entry = servers.get(server).ok_or_else(|| CallError::UnknownServer { server: server.to_string() })?;
            let Some(connection) = entry.connection.clone().filter(|_| entry.state == ServerState::Ready) else {
                let readiness = match &entry.state {
                    ServerState::Starting => Readiness::Starting,
                    ServerState::Failed { error } => Readiness::Failed { error: error.clone() },
                    _ => Readiness::Stopped,
                };
                return Err(CallError::NotReady { server: server.to_string(), state: entry.state.words().to_string(), readiness });
            };
            if !entry.tools.iter().any(|t| t.name == tool) {
                let names: Vec<&str> = entry.tools.iter().map(|t| t.name.as_str()).collect();
                return Err(CallError::UnknownTool {
                    server: server.to_string(),
                    tool: tool.to_string(),
                    available: if names.is_empty() { "no tools".to_string() } else { names.join(", ") },
                });
            }
            connection
        };
        let Connection { peer, mut alive, stderr } = connection;
        let exited = |stderr: &StderrTail| CallError::ServerExited {
            server: server.to_string(),
            tool: tool.to_string(),
            stderr_tail: lock(stderr).iter().cloned().collect(),
        };
        enum Outcome {
            Answered(Result<rmcp::model::CallToolResult, ServiceError>),
            TimedOut,
            Cancelled,
            Exited,
        }
        // Dropping the call future before its answer sends notifications/cancelled (rmcp).
        let call = peer.call_tool(CallToolRequestParams::new(tool.to_string()).with_arguments(arguments));
        let outcome = tokio::select! {
            answer = call => Outcome::Answered(answer),
            _ = tokio::time::sleep(timeout) => Outcome::TimedOut,
            _ = cancel => Outcome::Cancelled,
            _ = alive.changed() => Outcome::Exited,
        };
        match outcome {
            Outcome::Answered(Ok(result)) => Ok(tool_output(result)),
            Outcome::Answered(Err(ServiceError::McpError(error))) => {
                Err(CallError::Protocol { server: server.to_string(), tool: tool.to_string(), detail: error.message.into_owned() })
            }
            Outcome::Answered(Err(ServiceError::TransportClosed | ServiceError::TransportSend(_))) => {
                // The pipe closed first; give the supervisor a moment to see the exit and the
                // last stderr lines.
                let _ = tokio::time::timeout(EXIT_SETTLE, alive.changed()).await;
                Err(exited(&stderr))
            }
            Outcome::Answered(Err(error)) => {
                Err(CallError::Protocol { server: server.to_string(), tool: tool.to_string(), detail: error.to_string() })
            }
            Outcome::TimedOut => Err(CallError::Timeout { server: server.to_string(), tool: tool.to_string(), waited: timeout }),
            Outcome::Cancelled => Err(CallError::Cancelled),
            Outcome::Exited => Err(exited(&stderr)),
        }
    }
}

impl Inner {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Entry>> {
        lock(&self.servers)
    }

    fn bump(&self) {
        self.changes.send_modify(|n| *n += 1);
    }
}

impl Drop for Inner {
    fn drop(&mut self) {
        // At once, whatever the runtimes are doing; the supervisors then reap the processes.
        for entry in self.servers.get_mut().unwrap_or_else(|e| e.into_inner()).values() {
            if let Some(group) = entry.process_group {
                signal_group(group, Signal::Kill);
            }
        }
    }
}

/// A poisoned lock only means a panic elsewhere; the data (statuses, lines) is still usable.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Receives `notifications/tools/list_changed` for the supervisor.
struct Handler {
    tools_changed: mpsc::UnboundedSender<()>,
}

impl ClientHandler for Handler {
    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        let _ = self.tools_changed.send(());
    }

    fn get_info(&self) -> ClientConfig {
        ClientConfig::new(ClientCapabilities::default(), Implementation::new("confab", env!("CARGO_PKG_VERSION")))
    }
}

/// Why a server left Ready (or never got there).
enum End {
    Stopped(Option<oneshot::Sender<()>>),
    Failed(String),
}

struct Supervisor {
    host: Weak<Inner>,
    name: String,
    generation: u64,
    stderr: StderrTail,
    _alive_token: mpsc::Sender<()>,
}

/// A stdio server's process and the task reading its stderr.
struct Process {
    child: Child,
    group: u32,
    stderr_reader: Option<JoinHandle<()>>,
}

impl Supervisor {
    /// Applies `change` to this supervisor's entry if it is still the current one.
    fn update(&self, change: impl FnOnce(&mut Entry)) {
        let Some(host) = self.host.upgrade() else { return };
        let mut servers = host.lock();
        if let Some(entry) = servers.get_mut(&self.name).filter(|e| e.generation == self.generation) {
            change(entry);
            drop(servers);
            host.bump();
        }
    }

    async fn run(self, transport: Transport, mut stop: oneshot::Receiver<oneshot::Sender<()>>) {
        let (tools_tx, tools_rx) = mpsc::unbounded_channel();
        let handler = Handler { tools_changed: tools_tx };
        let end = match transport {
            Transport::Stdio { command, args, env, cwd } => {
                let mut launch = tokio::process::Command::new(&command);
                launch.args(&args).envs(&env).stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).kill_on_drop(true);
                if let Some(cwd) = &cwd {
                    launch.current_dir(cwd);
                }
                // Its own process group, so that stop reaches what it spawns (npx -> node).
                #[cfg(unix)]
                launch.process_group(0);
                match launch.spawn() {
                    Err(e) => End::Failed(spawn_error(&command, cwd.as_deref(), &e)),
                    Ok(mut child) => {
                        let group = child.id().unwrap_or_default();
                        self.update(|entry| entry.process_group = Some(group));
                        let stderr_reader =
                            child.stderr.take().map(|pipe| tokio::spawn(read_stderr(pipe, self.stderr.clone(), self.name.clone())));
                        match (child.stdout.take(), child.stdin.take()) {
                            (Some(stdout), Some(stdin)) => {
                                let transport = AsyncRwTransport::new(stdout, stdin).with_max_line_length(MAX_MESSAGE);
                                let mut process = Some(Process { child, group, stderr_reader });
                                let end = self.serve(handler.serve(transport), &mut process, &mut stop, tools_rx).await;
                                self.end_process(process, &end).await;
                                end
                            }
                            _ => End::Failed("Its standard input and output could not be connected.".to_string()),
                        }
                    }
                }
            }
            Transport::Http { url, headers } => match http_transport(&url, &headers) {
                Err(problem) => End::Failed(problem),
                Ok(transport) => {
                    let end = self.serve(handler.serve(transport), &mut None, &mut stop, tools_rx).await;
                    if let End::Failed(error) = &end {
                        tracing::info!(server = %self.name, url = %crate::config::loggable_url(&url), "MCP server failed: {error}");
                    }
                    end
                }
            },
        };
        match end {
            End::Stopped(done) => {
                tracing::info!(server = %self.name, "MCP server stopped");
                self.update(|entry| {
                    entry.state = ServerState::Stopped;
                    entry.tools.clear();
                    entry.connection = None;
                    entry.process_group = None;
                });
                if let Some(done) = done {
                    let _ = done.send(());
                }
            }
            End::Failed(error) => {
                tracing::info!(server = %self.name, "MCP server failed: {error}");
                self.update(|entry| {
                    entry.state = ServerState::Failed { error };
                    entry.tools.clear();
                    entry.connection = None;
                    entry.process_group = None;
                });
            }
        }
    }

    /// Initializes the connection, lists the tools, then waits for the end: a stop, the
    /// process's exit or the connection's close. Tool lists are fetched again when the server
    /// says they changed.
    async fn serve<S>(
        &self,
        connecting: impl Future<Output = Result<RunningService<RoleClient, S>, ClientInitializeError>>,
        process: &mut Option<Process>,
        stop: &mut oneshot::Receiver<oneshot::Sender<()>>,
        mut tools_changed: mpsc::UnboundedReceiver<()>,
    ) -> End
    where
        S: rmcp::Service<RoleClient>,
    {
        enum Event<T> {
            Done(T),
            Exited(std::io::Result<ExitStatus>),
            Stop(Option<oneshot::Sender<()>>),
            TimedOut,
        }
        // Startup: the handshake and the first tool list, within STARTUP_TIMEOUT.
        let startup = async {
            let running = connecting.await.map_err(|e| init_error_words(&e))?;
            let tools = running.peer().list_all_tools().await.map_err(|e| format!("Listing its tools failed: {e}."))?;
            Ok::<_, String>((running, tools))
        };
        let event = tokio::select! {
            result = tokio::time::timeout(STARTUP_TIMEOUT, startup) => match result {
                Ok(result) => Event::Done(result),
                Err(_) => Event::TimedOut,
            },
            status = wait_exit(process) => Event::Exited(status),
            reply = &mut *stop => Event::Stop(reply.ok()),
        };
        let (running, tools) = match event {
            Event::Done(Ok(started)) => started,
            Event::Done(Err(error)) => {
                // A server that dies at start usually closes the pipe before its exit is seen.
                if process.is_some() {
                    if let Ok(status) = tokio::time::timeout(EXIT_SETTLE, wait_exit(process)).await {
                        return End::Failed(exit_words(status));
                    }
                }
                return End::Failed(error);
            }
            Event::Exited(status) => return End::Failed(exit_words(status)),
            Event::Stop(reply) => return End::Stopped(reply),
            Event::TimedOut => {
                return End::Failed(format!(
                    "It did not finish starting within {} s. Check that it is an MCP server and that it can reach what it needs.",
                    STARTUP_TIMEOUT.as_secs()
                ))
            }
        };
        let peer = running.peer().clone();
        let (alive_tx, alive_rx) = watch::channel(());
        tracing::info!(server = %self.name, tools = tools.len(), "MCP server ready");
        self.update(|entry| {
            entry.state = ServerState::Ready;
            entry.tools = tools.into_iter().map(ToolInfo::from).collect();
            entry.connection = Some(Connection { peer: peer.clone(), alive: alive_rx, stderr: self.stderr.clone() });
        });
        let cancel_service = running.cancellation_token();
        let quit = running.waiting();
        tokio::pin!(quit);
        let end = loop {
            enum Ready {
                Exited(std::io::Result<ExitStatus>),
                Stop(Option<oneshot::Sender<()>>),
                Closed,
                ToolsChanged,
            }
            let event = tokio::select! {
                status = wait_exit(process) => Ready::Exited(status),
                reply = &mut *stop => Ready::Stop(reply.ok()),
                _ = &mut quit => Ready::Closed,
                Some(()) = tools_changed.recv() => Ready::ToolsChanged,
            };
            match event {
                Ready::Exited(status) => break End::Failed(exit_words(status)),
                Ready::Stop(reply) => break End::Stopped(reply),
                Ready::Closed => {
                    if process.is_some() {
                        if let Ok(status) = tokio::time::timeout(EXIT_SETTLE, wait_exit(process)).await {
                            break End::Failed(exit_words(status));
                        }
                    }
                    break End::Failed("It closed the connection. Restart it, or check its output.".to_string());
                }
                Ready::ToolsChanged => {
                    // Still watching for a stop or an exit while the server answers.
                    let listed = tokio::select! {
                        listed = tokio::time::timeout(STARTUP_TIMEOUT, peer.list_all_tools()) => listed,
                        status = wait_exit(process) => break End::Failed(exit_words(status)),
                        reply = &mut *stop => break End::Stopped(reply.ok()),
                    };
                    match listed {
                        Ok(Ok(tools)) => {
                            tracing::debug!(server = %self.name, tools = tools.len(), "MCP server's tools changed");
                            self.update(|entry| entry.tools = tools.into_iter().map(ToolInfo::from).collect());
                        }
                        Ok(Err(e)) => tracing::info!(server = %self.name, "listing the changed tools failed: {e}"),
                        Err(_) => tracing::info!(server = %self.name, "listing the changed tools timed out"),
                    }
                }
            }
        };
        // In-flight calls end now, with ServerExited.
        drop(alive_tx);
        cancel_service.cancel();
        end
    }

    /// Makes sure the process and everything in its group are gone and reaped, and that the
    /// stderr tail holds its last lines.
    async fn end_process(&self, process: Option<Process>, end: &End) {
        let Some(Process { mut child, group, stderr_reader }) = process else { return };
        if matches!(end, End::Stopped(_)) || child.try_wait().ok().flatten().is_none() {
            signal_group(group, Signal::Term);
            if tokio::time::timeout(STOP_GRACE, child.wait()).await.is_err() {
                tracing::info!(server = %self.name, "MCP server ignored SIGTERM; killing it");
            }
        }
        // Whatever it left behind in its group (the child itself may already be reaped).
        signal_group(group, Signal::Kill);
        let _ = child.kill().await;
        if let Some(reader) = stderr_reader {
            // A grandchild can hold stderr open: don't wait for it long.
            let _ = tokio::time::timeout(EXIT_SETTLE, reader).await;
        }
    }
}

async fn wait_exit(process: &mut Option<Process>) -> std::io::Result<ExitStatus> {
    match process {
        Some(process) => process.child.wait().await,
        None => std::future::pending().await,
    }
}

/// Why the MCP handshake failed, in words that say what to check.
fn init_error_words(error: &ClientInitializeError) -> String {
    if error.is_authorization_required() {
        return "It asks for authorization (HTTP 401 or 403). Put its key or token in the server's headers, such as \
                Authorization: Bearer <token>."
            .to_string();
    }
    match error {
        ClientInitializeError::ConnectionClosed(_) => "It closed the connection during the MCP handshake: it may not be an MCP \
             server, or it writes something other than MCP messages on its standard output."
            .to_string(),
        ClientInitializeError::TransportError { error, .. } => {
            let outer = error_chain(error);
            // rmcp keeps reqwest's error in a variant without a source: follow it by hand.
            let client = outer.iter().find_map(|e| match e.downcast_ref::<StreamableHttpError<reqwest::Error>>() {
                Some(StreamableHttpError::Client(client)) => Some(client),
                _ => None,
            });
            let status = outer.iter().find_map(|e| e.downcast_ref::<HttpStatusError>().map(|s| s.status));
            let status = status.or_else(|| client.and_then(|c| c.status()).map(|s| s.as_u16()));
            let innermost = match client {
                Some(client) => error_chain(client).last().map(|e| e.to_string()),
                None => outer.last().map(|e| e.to_string()),
            };
            match (status, innermost) {
                (Some(status), _) => {
                    format!("It answered HTTP {status}. Check the URL (MCP endpoints often end in /mcp) and that the server is running.")
                }
                (None, Some(innermost)) => {
                    format!("It could not be reached ({innermost}). Check the URL and that the server is running.")
                }
                (None, None) => format!("It could not be reached ({error})."),
            }
        }
        other => format!("The MCP handshake failed: {other}."),
    }
}

fn error_chain<'a>(error: &'a (dyn std::error::Error + 'static)) -> Vec<&'a (dyn std::error::Error + 'static)> {
    std::iter::successors(Some(error), |e| e.source()).collect()
}

fn exit_words(status: std::io::Result<ExitStatus>) -> String {
    match status {
        Ok(status) => match status.code() {
            Some(code) => {
                format!("It exited with status {code}. Its last output is shown; check the command, its arguments and environment.")
            }
            None => format!("It was ended by a signal ({status})."),
        },
        Err(e) => format!("It could not be watched ({e})."),
    }
}

fn spawn_error(command: &str, cwd: Option<&std::path::Path>, error: &std::io::Error) -> String {
    match (error.kind(), cwd) {
        (std::io::ErrorKind::NotFound, Some(cwd)) if !cwd.is_dir() => {
            format!("Its folder `{}` does not exist. Fix `cwd` in its settings.", cwd.display())
        }
        (std::io::ErrorKind::NotFound, _) => {
            format!("The command `{command}` was not found. Install it, or give its full path in the server's settings.")
        }
        (std::io::ErrorKind::PermissionDenied, _) => {
            format!("The command `{command}` may not be run (permission denied). Make it executable, or give another.")
        }
        _ => format!("The command `{command}` could not be started: {error}."),
    }
}

/// Keeps the last lines of a server's stderr (and logs them at debug: they may hold secrets).
async fn read_stderr(mut pipe: ChildStderr, tail: StderrTail, server: String) {
    let mut chunk = vec![0u8; 8192];
    let mut line = Vec::new();
    let keep = |line: &mut Vec<u8>| {
        let text = String::from_utf8_lossy(line);
        let text = text.trim_end();
        let text: String = text.chars().take(STDERR_LINE_CHARS).collect();
        line.clear();
        tracing::debug!(server = %server, "stderr: {text}");
        let mut tail = lock(&tail);
        tail.push_back(text);
        while tail.len() > STDERR_TAIL_LINES {
            tail.pop_front();
        }
    };
    loop {
        let read = match pipe.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        for &byte in &chunk[..read] {
            if byte == b'\n' {
                keep(&mut line);
            } else if line.len() < STDERR_LINE_CHARS * 4 {
                line.push(byte);
            }
        }
    }
    if !line.is_empty() {
        keep(&mut line);
    }
}

/// reqwest with rustls needs its cryptography chosen once per process (as in confab-remote).
fn install_crypto() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // Err only when another part of the process installed one first: that one is used.
        let _ = rustls::crypto::ring::default_provider().install_default();
    });
}

/// Headers the transport sets itself.
const RESERVED_HEADERS: [&str; 4] = ["accept", "mcp-session-id", "last-event-id", "mcp-protocol-version"];

fn http_transport(url: &str, headers: &BTreeMap<String, String>) -> Result<StreamableHttpClientTransport<reqwest::Client>, String> {
    crate::config::check_url(url).map_err(|problem| format!("Its URL is not usable: {problem}"))?;
    let mut custom = HashMap::new();
    for (name, value) in headers {
        if RESERVED_HEADERS.contains(&name.to_ascii_lowercase().as_str()) {
            return Err(format!("The header `{name}` is set by the MCP transport itself. Remove it from the server's headers."));
        }
        let header_name = http::HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| format!("The header name `{name}` is not valid. Use letters, digits and dashes."))?;
        // The value is not quoted back: it is usually a key.
        let mut header_value = http::HeaderValue::from_str(value).map_err(|_| {
            format!("The value of the header `{name}` is not valid (printable ASCII, no line breaks). Check it in the server's settings.")
        })?;
        header_value.set_sensitive(true);
        custom.insert(header_name, header_value);
    }
    install_crypto();
    let client = reqwest::Client::builder()
        // Custom headers (keys) must not follow a redirect to another host.
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("The HTTP client could not be set up: {e}."))?;
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_string())
        .custom_headers(custom)
        .max_json_response_size(MAX_MESSAGE)
        .max_sse_event_size(MAX_MESSAGE);
    Ok(StreamableHttpClientTransport::with_client(client, config))
}

#[derive(Clone, Copy)]
enum Signal {
    Term,
    Kill,
}

/// Signals a whole process group; one already gone is fine.
#[cfg(unix)]
fn signal_group(group: u32, signal: Signal) {
    let Ok(group) = libc::pid_t::try_from(group) else { return };
    if group <= 1 {
        return;
    }
    let signal = match signal {
        Signal::Term => libc::SIGTERM,
        Signal::Kill => libc::SIGKILL,
    };
    // SAFETY: kill(2) with a negative pid signals that process group; it touches no memory.
    unsafe {
        libc::kill(-group, signal);
    }
}

#[cfg(not(unix))]
fn signal_group(_group: u32, _signal: Signal) {
    // Without process groups the child itself is killed by `Child::kill` (and kill_on_drop).
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Tauri commands and the chat's tasks need both.
    #[test]
    fn the_host_is_shareable_and_a_call_can_move_between_threads() {
        fn shareable<T: Send + Sync + Clone + 'static>() {}
        fn sendable<T: Send>(_: &T) {}
        shareable::<McpHost>();
        let host = McpHost::new();
        let call = host.call("a", "b", serde_json::Map::new(), Duration::ZERO, std::future::ready(()));
        sendable(&call);
    }
}
