//! The local OpenAI-compatible server inside the app: on when Settings say so, serving the
//! model loaded for the chats and, loaded for a request that names it, any other model the
//! picker lists (its own pool beside the chats' model, under one limit for both), on the app's
//! engine and caches. Its requests never touch the chat history (the Responses API keeps its
//! replies in their own table of the same database).

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use confab_engine::{Engine, LoadOptions};
use confab_server::{
    AccessRules, KeepAlive, ListedModel, LoadedState, ModelPool, ModelSource, PoolError, PoolOptions, RunningServer, ServedModel,
    ServerOptions,
};
use confab_store::Store;

use crate::models::slot::ModelSlot;
use crate::settings::Settings;
use crate::sync::lock;

/// How long a model the server loaded for a request stays loaded when idle (Ollama's default).
const KEEP_ALIVE: Duration = Duration::from_secs(5 * 60);
/// How long a request waits for models that other requests are using to free room.
const WAIT_FOR_ROOM: Duration = Duration::from_secs(600);

/// The chats' model (the slot's), and the server's own pool for the others.
struct AppModels {
    slot: Arc<ModelSlot>,
    pool: Arc<ModelPool>,
}

impl AppModels {
    /// The chats' model, as a request holds it (the slot, not the pool, loads and unloads it).
    fn chats_model(&self) -> Option<ServedModel> {
        self.slot.current().map(|c| ServedModel::new(c.id, c.info.name.clone(), c.info, c.draft))
    }

    fn chats_listed(&self) -> Option<ListedModel> {
        self.slot.current().map(|c| ListedModel {
            name: c.info.name.clone(),
            path: c.info.path.clone(),
            found: None,
            loaded: Some(LoadedState { weights_bytes: c.info.weights_bytes, info: c.info, requests: 0, unloads_in: None }),
        })
    }
}

impl ModelSource for AppModels {
    fn engine(&self) -> &Engine {
        self.pool.engine()
    }

    fn models(&self) -> Vec<ListedModel> {
        let mut models: Vec<ListedModel> = self.chats_listed().into_iter().collect();
        for model in self.pool.models() {
            match models.first_mut().filter(|chats| chats.path == model.path) {
                Some(chats) => chats.found = model.found,
                None => models.push(model),
            }
        }
        models
    }

    fn loaded(&self) -> Vec<ListedModel> {
        self.chats_listed().into_iter().chain(self.pool.loaded()).collect()
    }

    fn acquire(&self, asked: &str) -> Result<ServedModel, PoolError> {
        match self.chats_model().filter(|m| m.answers_to(asked)) {
            Some(model) => Ok(model),
            None => self.pool.acquire(asked),
        }
    }

    fn keep_alive(&self, asked: &str, keep_alive: KeepAlive) -> Result<(), PoolError> {
        match self.chats_model().filter(|m| m.answers_to(asked)) {
            Some(model) if keep_alive == KeepAlive::Idle(Duration::ZERO) => Err(PoolError::Resident { name: model.name }),
            // The chats' model stays while the app has it loaded.
            Some(_) => Ok(()),
            None => self.pool.keep_alive(asked, keep_alive),
        }
    }
}

/// What the server was started with: a change restarts it.
#[derive(Debug, Clone, PartialEq)]
struct Listening {
    port: u16,
    key: String,
    origins: Vec<String>,
}

#[derive(Default)]
pub struct LocalServer {
    running: tokio::sync::Mutex<Option<(RunningServer, Listening, Arc<ModelPool>)>>,
    /// Why the last start failed (a port in use), until the next start.
    error: Mutex<Option<String>>,
}

/// For the header, the settings pane and the picker.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct ServerStatus {
    /// `http://127.0.0.1:PORT/v1` while it runs.
    pub address: Option<String>,
    pub active_requests: usize,
    pub error: Option<String>,
    /// The models the server loaded for its requests, beside the chats' model.
    pub loaded: Vec<ServerModel>,
}

/// A model the server holds.
#[derive(Debug, Clone, serde::Serialize, ts_rs::TS)]
pub struct ServerModel {
    pub name: String,
    pub path: PathBuf,
    /// Requests using it now.
    pub requests: usize,
}

impl LocalServer {
    pub async fn status(&self) -> ServerStatus {
        let running = self.running.lock().await;
        let loaded = running.as_ref().map(|(_, _, pool)| pool.loaded()).unwrap_or_default();
        ServerStatus {
            address: running.as_ref().map(|(server, _, _)| format!("http://{}/v1", server.address())),
            active_requests: running.as_ref().map_or(0, |(server, _, _)| server.active_requests()),
            error: lock(&self.error).clone(),
            loaded: loaded
                .into_iter()
                .map(|m| ServerModel { requests: m.loaded.map_or(0, |l| l.requests), name: m.name, path: m.path })
                .collect(),
        }
    }
}

impl LocalServer {
    /// Starts, restarts or stops the server to match `settings`, serving the slot's model and
    /// the others in `folders` (asked each time) on `engine` (its Responses API keeping responses in `store`). A
    /// failure to start is kept for the status (the settings themselves were valid).
    pub async fn apply(
        &self,
        settings: &Settings,
        engine: &Arc<Engine>,
        slot: &Arc<ModelSlot>,
        store: &Store,
        folders: impl Fn() -> Vec<PathBuf> + Send + Sync + 'static,
    ) {
        let mut running = self.running.lock().await;
        let wanted = settings.server_enabled.then(|| Listening {
            port: settings.server_port,
            key: settings.server_key.clone(),
            origins: settings.server_origins.clone(),
        });
        if running.as_ref().map(|(_, listening, _)| listening) == wanted.as_ref() {
            return;
        }
        if let Some((old, _, _)) = running.take() {
            old.stop().await;
        }
        *lock(&self.error) = None;
        let Some(listening) = wanted else { return };
        let options = ServerOptions {
            port: listening.port,
            api_key: Some(listening.key.clone()).filter(|k| !k.is_empty()),
            // The environment's names and origins, as `confab serve` reads them, and the pane's.
            access: AccessRules::from_env().with(AccessRules { hosts: Vec::new(), origins: listening.origins.clone() }),
            responses: Some(store.clone()),
            ..ServerOptions::default()
        };
        // The chats' model counts against the one limit for loaded models.
        let chats = slot.clone();
        let pool_options = PoolOptions {
            load: LoadOptions::default(),
            weights_limit: confab_engine::memory_for_models(confab_engine::physical_memory()),
            keep_alive: KeepAlive::Idle(KEEP_ALIVE),
            wait_for_room: WAIT_FOR_ROOM,
            weights_beside: Some(Box::new(move || chats.current().map_or(0, |c| c.info.weights_bytes))),
        };
        let pool = ModelPool::new(engine.clone(), Box::new(move || confab_engine::discover(&folders())), pool_options);
        let source = Arc::new(AppModels { slot: slot.clone(), pool: pool.clone() });
        match confab_server::start(options, source).await {
            Ok(started) => *running = Some((started, listening, pool)),
            Err(e) => *lock(&self.error) = Some(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;
    use crate::state::AppState;

    /// A plain HTTP/1.1 exchange: the status line and the body.
    fn request(address: &str, method: &str, path: &str, body: &str) -> (String, String) {
        let host = address.trim_start_matches("http://").trim_end_matches("/v1");
        exchange(address, &format!("{method} {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n"), body)
    }

    /// `head` (the request line and headers, each ending in CRLF) and `body` sent to the server
    /// at `address`; the status line and the body.
    fn exchange(address: &str, head: &str, body: &str) -> (String, String) {
        let host = address.trim_start_matches("http://").trim_end_matches("/v1");
        let mut stream = std::net::TcpStream::connect(host).unwrap();
        let head = format!("{head}Content-Length: {}\r\nConnection: close\r\n\r\n", body.len());
        stream.write_all(head.as_bytes()).unwrap();
        stream.write_all(body.as_bytes()).unwrap();
        let mut answer = String::new();
        stream.read_to_string(&mut answer).unwrap();
        let (head, body) = answer.split_once("\r\n\r\n").unwrap();
        (head.lines().next().unwrap().to_string(), body.to_string())
    }

    #[test]
    fn settings_turn_the_server_on_and_off_and_it_serves_the_loaded_model() {
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let state = AppState::open(confab_paths::AppPaths::under(dir.path())).await.unwrap();
            assert_eq!(state.server.status().await.address, None, "off by default");
            // Port 0: any free one (the settings pane asks for 1024 and up).
            let on = Settings { server_enabled: true, server_port: 0, server_key: "k".into(), ..Settings::default() };
            state.apply_server_settings(&on).await;
            let status = state.server.status().await;
            let address = status.address.clone().expect("listening");
            assert_eq!((status.active_requests, status.error), (0, None));

            let address_for_io = address.clone();
            let answers = tokio::task::spawn_blocking(move || {
                let health = request(&address_for_io, "GET", "/health", "");
                let chat = request(&address_for_io, "POST", "/v1/chat/completions", r#"{"model":"m","messages":[]}"#);
                (health, chat)
            })
            .await
            .unwrap();
            let (health, chat) = answers;
            assert!(health.0.contains("200"), "{health:?}");
            assert!(health.1.contains(r#""model":null"#), "no model loaded yet: {health:?}");
            assert!(chat.0.contains("401"), "the key is asked: {chat:?}");
            assert!(chat.1.contains("invalid_api_key"), "{chat:?}");

            state.apply_server_settings(&Settings { server_enabled: false, ..on }).await;
            assert_eq!(state.server.status().await.address, None);
        });
    }

    #[test]
    fn the_apps_server_refuses_foreign_hosts_and_pages_and_admits_the_origins_the_settings_add() {
        let dir = tempfile::tempdir().unwrap();
        tauri::async_runtime::block_on(async {
            let state = AppState::open(confab_paths::AppPaths::under(dir.path())).await.unwrap();
            let on = Settings {
                server_enabled: true,
                server_port: 0,
                server_origins: vec!["https://chat.example.com".into()],
                ..Settings::default()
            };
            state.apply_server_settings(&on).await;
            let address = state.server.status().await.address.expect("listening");
            let port = address.trim_start_matches("http://127.0.0.1:").trim_end_matches("/v1").to_string();
            let answers = tokio::task::spawn_blocking(move || {
                let get = |headers: &str| exchange(&address, &format!("GET /v1/models HTTP/1.1\r\n{headers}"), "");
                let post = |headers: &str| exchange(&address, &format!("POST /v1/chat/completions HTTP/1.1\r\n{headers}"), "{}");
                [
                    get(&format!("Host: evil.example:{port}\r\n")),
                    get(&format!("Host: 127.0.0.1:{port}\r\nOrigin: http://evil.example\r\n")),
                    post(&format!("Host: localhost:{port}\r\nContent-Type: text/plain\r\n")),
                    get(&format!("Host: localhost:{port}\r\nOrigin: https://chat.example.com\r\n")),
                    get(&format!("Host: localhost:{port}\r\nOrigin: tauri://localhost\r\n")),
                ]
            })
            .await
            .unwrap();
            let [foreign_host, foreign_page, plain_text, added_page, app] = answers;
            assert!(foreign_host.0.contains("403") && foreign_host.1.contains("host_not_allowed"), "{foreign_host:?}");
            assert!(foreign_page.0.contains("403") && foreign_page.1.contains("origin_not_allowed"), "{foreign_page:?}");
            assert!(plain_text.0.contains("415"), "{plain_text:?}");
            assert!(added_page.0.contains("200"), "{added_page:?}");
            assert!(app.0.contains("200"), "{app:?}");
            state.apply_server_settings(&Settings { server_enabled: false, ..on }).await;
        });
    }
}
