//! `confab serve`: the local OpenAI- and Anthropic-compatible server on one model, until Ctrl-C.

use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::task::Poll;

use anyhow::Context;
use confab_engine::Engine;
use confab_engine::LoadOptions;
use confab_paths::AppPaths;
use confab_server::{AccessRules, ModelSource, ServedModel, ServerOptions};

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
}

/// One model, loaded at start and served for good (with an embedding model beside it, if asked).
struct OneModel {
    engine: Engine,
    model: ServedModel,
    embedding: Option<ServedModel>,
}

impl ModelSource for OneModel {
    fn engine(&self) -> &Engine {
        &self.engine
    }

    fn current(&self) -> Option<ServedModel> {
        Some(self.model.clone())
    }

    fn embedding(&self) -> Option<ServedModel> {
        self.embedding.clone()
    }
}

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
            Some(ServedModel { id, name: confab_engine::display_name(&info.path), info, draft: None })
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
    let source = Arc::new(OneModel { engine, model: ServedModel { id, name: name.clone(), info, draft }, embedding });
    let paths = AppPaths::from_env();
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
