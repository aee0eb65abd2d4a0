//! `confab embed`: one vector per text from an embedding model (a sentence-transformers folder:
//! Qwen3-Embedding, EmbeddingGemma), printed as JSON.

use std::path::PathBuf;

use anyhow::Context;
use confab_engine::EmbedPrompt;
use confab_engine::{DtypeChoice, LoadOptions};
use confab_engine::{Engine, EngineOptions};

#[derive(clap::Args)]
pub struct Args {
    /// The embedding model's folder.
    model: PathBuf,
    /// The texts; each gets its own vector (an empty one is refused, as by /v1/embeddings).
    #[arg(required = true)]
    texts: Vec<String>,
    /// Embed the texts as search queries (the model's `query` prompt before each) instead of
    /// as documents (its `document` prompt, if it has one).
    #[arg(long, conflicts_with = "prompt")]
    query: bool,
    /// A prompt written before each text as it is (Qwen3-Embedding: "Instruct: <task>\nQuery:").
    #[arg(long)]
    prompt: Option<String>,
    /// auto, float32, bfloat16 or float16.
    #[arg(long, default_value = "auto")]
    dtype: DtypeChoice,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    // As the server's /v1/embeddings (and OpenAI's): an empty text's vector would be the
    // prompt's and the special tokens' alone, the same for every empty text; a blank passage is
    // a mistake to see, not something to search.
    if let Some(i) = args.texts.iter().position(String::is_empty) {
        anyhow::bail!(
            "text {} is empty: there is nothing to embed (`/v1/embeddings` refuses an empty input too); give each text some words",
            i + 1
        );
    }
    let engine = Engine::start(EngineOptions::default())?;
    let options = LoadOptions { dtype: args.dtype, ..Default::default() };
    let (model, info) = engine.load(&args.model, options, |_| {}).with_context(|| format!("loading {}", args.model.display()))?;
    if info.embedding.is_none() {
        anyhow::bail!(
            "{} is not an embedding model (its folder has no sentence-transformers modules.json with a Pooling module); `confab chat` talks to chat models",
            args.model.display()
        );
    }
    let prompt = match (args.prompt, args.query) {
        (Some(text), _) => EmbedPrompt::Text(text),
        (None, true) => EmbedPrompt::Query,
        (None, false) => EmbedPrompt::Document,
    };
    let out = engine.embed(model, args.texts, prompt)?;
    let json = serde_json::json!({ "embeddings": out.vectors, "prompt_tokens": out.prompt_tokens });
    println!("{json}");
    Ok(std::process::ExitCode::SUCCESS)
}
