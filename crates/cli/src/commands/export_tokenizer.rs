//! `confab export-tokenizer` (hidden): write a GGUF's vocabulary as a Hugging Face
//! tokenizer.json, for tools that read only that (the mlx-lm benchmark's checkpoints).

use std::path::PathBuf;

use anyhow::Context;
use confab_engine::Tokenizer;
use mlx_rs::io::GgufFile;

#[derive(clap::Args)]
pub struct Args {
    /// The .gguf file.
    #[arg(long)]
    model: PathBuf,
    /// Folder to write tokenizer.json and tokenizer_config.json into.
    #[arg(long)]
    out: PathBuf,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let gguf = GgufFile::load(&args.model).with_context(|| format!("reading {}", args.model.display()))?;
    let tokenizer = Tokenizer::from_gguf(&gguf, &args.model)?;
    std::fs::create_dir_all(&args.out)?;
    tokenizer.inner().save(args.out.join("tokenizer.json"), false).map_err(|e| anyhow::anyhow!("writing tokenizer.json: {e}"))?;
    let name = |id: Option<u32>| id.and_then(|id| tokenizer.id_to_token(id));
    let config = serde_json::json!({
        "bos_token": name(tokenizer.bos_id()),
        "eos_token": name(tokenizer.eos_id()),
        "add_bos_token": tokenizer.add_bos(),
        "chat_template": tokenizer.chat_template(),
    });
    std::fs::write(args.out.join("tokenizer_config.json"), serde_json::to_string_pretty(&config)?)?;
    Ok(std::process::ExitCode::SUCCESS)
}
