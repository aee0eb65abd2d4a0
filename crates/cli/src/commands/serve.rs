//! `confab serve`: the local OpenAI-, Anthropic- and Ollama-compatible server, until Ctrl-C. It
//! starts with one model loaded (and an embedding and a draft model beside it, if asked) and
//! loads any other model Confab finds when a request names it (`confab_server::ModelPool`).

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use anyhow::Context;
use confab_engine::LoadOptions;
use confab_engine::MemoryBudget;
use confab_paths::AppPaths;
use confab_server::{AccessRules, KeepAlive, ModelPool, PoolOptions, ServedModel, ServerOptions};

use super::common::ModelArgs;

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// The address to listen on; the default is this machine only. An address reachable from
    /// other machines (0.0.0.0) needs --api-key.
    #[arg(long, default_value = confab_server::DEFAULT_HOST)]
    host: String,
    /// The port (0: any free one; the address is printed).
    #[arg(long, default_value_t = confab_server::DEFAULT_PORT)]
    port: u16,
    /// Require the key on every API call, as `Authorization: Bearer <KEY>` or `x-api-key: <KEY>` (also read from CONFAB_API_KEY).
    #[arg(long, env = "CONFAB_API_KEY", hide_env_values = true)]
    api_key: Option<String>,
    /// A host name clients may call the server by, besides localhost and the addresses it
    /// listens on (a request naming any other is refused, against DNS rebinding); repeat or
    /// separate with commas; `*` matches any run of characters. CONFAB_ALLOWED_HOSTS adds more.
    #[arg(long = "allowed-host", value_name = "NAME", value_delimiter = ',')]
    allowed_hosts: Vec<String>,
    /// A web page origin (`https://chat.example.com`) allowed to call the server from a
    /// browser, besides pages on localhost; others are refused. Repeat or separate with commas;
    /// `*` matches any run of characters. CONFAB_ORIGINS adds more.
    #[arg(long = "allowed-origin", value_name = "ORIGIN", value_delimiter = ',')]
    allowed_origins: Vec<String>,
    /// An embedding model (a sentence-transformers folder: Qwen3-Embedding, EmbeddingGemma) to
    /// load beside the chat model, for POST /v1/embeddings; requests name it by its folder name.
    #[arg(long, value_name = "FOLDER")]
    embedding_model: Option<PathBuf>,
    /// A smaller model sharing the model's vocabulary (a folder or .gguf), loaded beside it to
    /// draft for requests that ask for `"speculative": "draft_model"`; one whose vocabulary
    /// differs is refused.
    #[arg(long, value_name = "PATH")]
    draft_model: Option<PathBuf>,
    /// The largest request body accepted, in MiB (images and clips come base64-encoded).
    #[arg(long, default_value_t = confab_server::DEFAULT_BODY_LIMIT >> 20)]
    max_body_mib: usize,
    /// More folders to find models in, which requests may then name (the app's models folder,
    /// the Hugging Face cache, LM Studio's folders and Ollama's store are always searched).
    #[arg(long = "folder", value_name = "FOLDER")]
    folders: Vec<PathBuf>,
    /// The most the loaded models' weights may take together: a size (8GB, 512MiB) or a share
    /// of this machine's memory (0.5). A request for a model that does not fit beside those
    /// loaded unloads the least recently used idle one. Default: the machine's memory less 2 GB
    /// for the system.
    #[arg(long, value_name = "SIZE")]
    models_memory: Option<MemoryBudget>,
    /// How long a model loaded for a request stays loaded when idle: seconds, 5m, 1h, 0, or -1
    /// for good (as Ollama's OLLAMA_KEEP_ALIVE). The models the server starts with stay.
    #[arg(long, value_name = "DURATION", default_value = "5m")]
    keep_alive: KeepAlive,
}

/// How long a request waits for models that other requests are using to free room.
const WAIT_FOR_ROOM: Duration = Duration::from_secs(600);

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    // Before the model loads, which can take minutes.
    confab_server::check_exposure(&args.host, args.api_key.as_deref())?;
    let (engine, id, info) = args.model.load(true)?;
    // What clients call the model: the name the model picker shows.
    let name = confab_engine::display_name(&info.path);
    let embedding = match &args.embedding_model {
        Some(path) => {
            let options = LoadOptions { dtype: args.model.dtype, ..Default::default() };
            let (id, info) = engine.load(path, options, |_| {}).with_context(|| format!("loading {}", path.display()))?;
            if info.embedding.is_none() {
                anyhow::bail!(
                    "{} is not an embedding model: --embedding-model takes a sentence-transformers folder (modules.json with a Pooling module), such as Qwen3-Embedding or EmbeddingGemma",
                    path.display()
                );
            }
            Some(ServedModel::new(id, confab_engine::display_name(&info.path), info, None))
        }
        None => None,
    };
    let draft = match &args.draft_model {
        Some(path) => {
            let options = LoadOptions { dtype: args.model.dtype, ..Default::default() };
            let (draft, _) =
                engine.load_draft(id, path, options, |_| {}).with_context(|| format!("loading the draft model {}", path.display()))?;
            Some(draft)
        }
        None => None,
    };
    let draft_line = args.draft_model.as_ref().map(|p| format!(" (draft model `{}`)", confab_engine::display_name(p))).unwrap_or_default();
    let embedding_line = embedding.as_ref().map(|m| format!(" (embedding model `{}`)", m.name)).unwrap_or_default();
    let paths = AppPaths::from_env();
    let physical = confab_engine::physical_memory();
    let weights_limit = match args.models_memory {
        Some(MemoryBudget::Bytes(bytes)) => bytes,
        Some(MemoryBudget::Share(share)) => (physical as f64 * share) as u64,
        None => confab_engine::memory_for_models(physical),
    };
    // The folders the picker searches (looked up each time: a model pulled into a cache that did
    // not exist at start is found), the ones given, and the model given by its path (so that it
    // can load again after being unloaded by name).
    let mut given = args.folders.clone();
    given.extend([args.model.path()].into_iter().chain(args.embedding_model.clone()));
    let searched = paths.clone();
    let folders = move || {
        let mut folders = vec![searched.models_dir.clone()];
        folders.extend(searched.other_model_folders());
        folders.extend(given.iter().cloned());
        folders
    };
    let options = PoolOptions {
        load: args.model.load_options()?,
        weights_limit,
        keep_alive: args.keep_alive,
        wait_for_room: WAIT_FOR_ROOM,
        weights_beside: None,
    };
    let source = ModelPool::new(Arc::new(engine), Box::new(move || confab_engine::discover(&folders())), options);
    source.adopt(ServedModel::new(id, name.clone(), info, draft), KeepAlive::Forever);
    if let Some(embedding) = embedding {
        source.adopt(embedding, KeepAlive::Forever);
    }
    let runtime = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    runtime.block_on(async move {
        // The Responses API keeps replies in the history database, as the app's server does.
        let database = paths.database();
        let store = confab_store::Store::open(&database)
            .await
            .with_context(|| format!("opening the history database {} for the Responses API's kept replies", database.display()))?;
        let options = ServerOptions {
            host: args.host,
            port: args.port,
            api_key: args.api_key,
            // The environment's names and origins and the flags' together, as the app's server
            // takes the environment's and its settings'.
            access: AccessRules::from_env().with(AccessRules { hosts: args.allowed_hosts, origins: args.allowed_origins }),
            body_limit: args.max_body_mib << 20,
            responses: Some(store),
        };
        let server = confab_server::start(options, source).await?;
        // Ctrl-C's handler is installed on the future's first poll: done here, before the line
        // below, so that a script stopping the server as soon as it reads the line stops it
        // cleanly rather than killing it.
        let mut ctrl_c = std::pin::pin!(tokio::signal::ctrl_c());
        let first = std::future::poll_fn(|cx| Poll::Ready(ctrl_c.as_mut().poll(cx))).await;
        // Scripts and tests wait for this line (with --port 0 it says which port).
        println!("confab serve: model `{name}` at http://{}/v1{embedding_line}{draft_line}", server.address());
        let pressed = match first {
            Poll::Ready(pressed) => pressed,
            Poll::Pending => ctrl_c.await,
        };
        pressed.context("waiting for Ctrl-C")?;
        tracing::info!("stopping");
        server.stop().await;
        anyhow::Ok(())
    })?;
    Ok(std::process::ExitCode::SUCCESS)
}
