//! What the app holds while it runs: one store, one engine, the loaded model, live replies.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};

use confab_engine::{BatchOptions, Engine, EngineOptions};
use confab_engine::{EncoderOptions, PrefixOptions};
use confab_paths::AppPaths;
use confab_secrets::SecretStore;
use confab_store::{ConversationId, MessageId, Store};

use crate::local_server::LocalServer;
use crate::models::context_meter::ContextMeter;
use crate::models::embedder::Embedder;
use crate::models::slot::ModelSlot;
use crate::providers::Providers;
use crate::settings::Settings;
use crate::sync::lock;
use crate::tools::call::ToolDecisionInput;
use crate::tools::servers::ToolServers;

pub struct AppState {
    pub paths: AppPaths,
    pub store: Store,
    /// Shared with the local server, which runs requests on the same engine and caches.
    pub engine: Arc<Engine>,
    pub model: Arc<ModelSlot>,
    pub server: LocalServer,
    pub settings: Mutex<Settings>,
    /// Keys (the local server's, providers') outside the SQLite file: the OS keychain, or a
    /// 0600 file.
    pub secrets: SecretStore,
    /// Remote providers and the remote model picked, if any.
    pub providers: tokio::sync::Mutex<Providers>,
    /// MCP servers from Settings › Tools (their secret values in `secrets`).
    pub tool_servers: tokio::sync::Mutex<ToolServers>,
    /// The running MCP servers.
    pub mcp: confab_mcp::McpHost,
    /// Tool calls waiting for the user's decision, by reply and position.
    pub tool_decisions: Mutex<HashMap<(MessageId, u32), tokio::sync::oneshot::Sender<ToolDecisionInput>>>,
    /// Each conversation's reply in progress (one at a time per chat).
    pub replies: Mutex<HashMap<ConversationId, LiveReply>>,
    /// Files the user dropped on the window: the only paths `attach_paths` will read.
    pub dropped: Mutex<HashSet<PathBuf>>,
    /// The open chat's token counts, for the context meter.
    pub context_meter: ContextMeter,
    /// The embedding model that searches documents too large for the context, once loaded.
    pub embedder: Embedder,
}

/// A reply being written: its Stop switch.
#[derive(Clone, Default)]
pub struct LiveReply {
    pub cancel: Arc<AtomicBool>,
}

impl AppState {
    /// Opens the store (marking replies a crash interrupted) and starts the engine.
    pub async fn open(paths: AppPaths) -> Result<AppState, String> {
        std::fs::create_dir_all(&paths.data_dir)
            .map_err(|e| format!("Could not create the data folder {}: {e}", paths.data_dir.display()))?;
        let database = paths.database();
        let store = Store::open(&database)
            .await
            .map_err(|e| format!("Could not open the history database {}: {e}. Move it aside to start afresh.", database.display()))?;
        if let Ok(interrupted) = store.recover_interrupted().await {
            if !interrupted.is_empty() {
                tracing::warn!(replies = interrupted.len(), "kept the replies the last exit interrupted, marked interrupted");
            }
        }
        let secrets = SecretStore::open(&paths.data_dir);
        let settings = Settings::load(&store, &secrets).await;
        let providers = Providers::load(&store).await;
        let tool_servers = ToolServers::load(&store).await;
        let engine = Arc::new(
            Engine::start(EngineOptions {
                prefix: PrefixOptions {
                    enabled: true,
                    memory_budget: (settings.kv_cache_memory_mb as usize) << 20,
                    disk_budget: settings.kv_cache_disk_mb << 20,
                    dir: Some(paths.cache_dir.join("prefix")),
                    ..PrefixOptions::default()
                },
                encoder: EncoderOptions { dir: Some(paths.cache_dir.join("encoder")), ..EncoderOptions::default() },
                batch: BatchOptions { memory_budget: Some(settings.memory_budget()), ..BatchOptions::default() },
                ..EngineOptions::default()
            })
            .map_err(|e| e.to_string())?,
        );
        Ok(AppState {
            paths,
            store,
            engine,
            model: Arc::default(),
            server: LocalServer::default(),
            settings: Mutex::new(settings),
            secrets,
            providers: tokio::sync::Mutex::new(providers),
            tool_servers: tokio::sync::Mutex::new(tool_servers),
            mcp: confab_mcp::McpHost::new(),
            tool_decisions: Mutex::new(HashMap::new()),
            replies: Mutex::new(HashMap::new()),
            dropped: Mutex::new(HashSet::new()),
            context_meter: ContextMeter::default(),
            embedder: Embedder::default(),
        })
    }

    pub fn settings(&self) -> Settings {
        lock(&self.settings).clone()
    }

    /// Remembers dropped files (canonical paths), so that only they can be attached by path.
    pub fn allow_dropped(&self, paths: &[PathBuf]) {
        let mut dropped = lock(&self.dropped);
        dropped.extend(paths.iter().filter_map(|p| p.canonicalize().ok()));
    }

    pub fn was_dropped(&self, path: &Path) -> bool {
        path.canonicalize().map(|p| lock(&self.dropped).contains(&p)).unwrap_or(false)
    }

    /// Starts, restarts or stops the local server to match `settings`.
    pub async fn apply_server_settings(&self, settings: &Settings) {
        // The folders looked up each time: a model downloaded into a cache that did not exist yet
        // is found.
        let (paths, added) = (self.paths.clone(), settings.model_folders.clone());
        let folders = move || model_folders(&paths, &added);
        self.server.apply(settings, &self.engine, &self.model, &self.store, folders).await;
    }

    /// Every folder models are looked for in: ours, other apps', and the user's.
    pub fn model_folders(&self) -> Vec<PathBuf> {
        model_folders(&self.paths, &self.settings().model_folders)
    }
}

/// Every folder models are looked for in: ours, other apps' (those there now), and `added`.
fn model_folders(paths: &AppPaths, added: &[PathBuf]) -> Vec<PathBuf> {
    let mut folders = vec![paths.models_dir.clone()];
    folders.extend(paths.other_model_folders());
    folders.extend(added.iter().cloned());
    folders.dedup();
    folders
}
