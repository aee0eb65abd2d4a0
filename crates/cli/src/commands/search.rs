//! `confab search QUERY`: repositories on the hub (or `HF_ENDPOINT`) whose name matches.

use anyhow::Context;
use confab_hub::{HubClient, HubOptions};

#[derive(clap::Args)]
pub struct Args {
    query: String,
    #[arg(long, default_value_t = 20)]
    limit: usize,
    /// The hub or a mirror (default: HF_ENDPOINT, else https://huggingface.co).
    #[arg(long)]
    endpoint: Option<String>,
    #[arg(long)]
    json: bool,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let client = HubClient::new(HubOptions::from_env(args.endpoint.as_deref(), None))?;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().context("starting the runtime")?;
    let hits = runtime.block_on(client.search(&args.query, args.limit))?;
    if args.json {
        println!("{}", serde_json::to_string_pretty(&hits)?);
        return Ok(std::process::ExitCode::SUCCESS);
    }
    for hit in hits {
        println!("{:<60} {:>10} downloads  {}", hit.id, hit.downloads, hit.pipeline_tag.unwrap_or_default());
    }
    Ok(std::process::ExitCode::SUCCESS)
}
