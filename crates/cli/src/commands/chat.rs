//! `confab chat`: talk to a model in the terminal, or ask one question with --prompt.

use std::io::{BufRead, Write};

use anyhow::Context;
use confab_engine::ChatMessage;
use confab_engine::MediaItem;
use confab_engine::SamplingParams;
use confab_engine::{ContextPolicy, Engine, ModelId, ModelInfo, Prompt};
use confab_turn::{ChatTurn, ReplyReader, Thinking, ToolChoice, Tools, TurnEvent};

use super::common::{MediaArgs, ModelArgs};
use super::generate::{print_media, SamplingArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// Ask this, print the answer and exit.
    #[arg(long)]
    prompt: Option<String>,
    /// Sent with the first message; in the chat, `/image PATH`, `/audio PATH` and `/video PATH` attach to the next.
    #[command(flatten)]
    media: MediaArgs,
    /// Documents (PDF, DOCX, HTML, Markdown, code, text) sent with the first message, read as
    /// the app reads attached documents.
    #[arg(long = "document", value_name = "PATH")]
    documents: Vec<std::path::PathBuf>,
    /// A system prompt for the conversation.
    #[arg(long)]
    system: Option<String>,
    #[arg(long, default_value_t = 512)]
    max_tokens: u32,
    #[command(flatten)]
    sampling: SamplingArgs,
    /// Print time to first token and speeds after each reply.
    #[arg(long)]
    stats: bool,
    /// Turn a reasoning model's thinking on or off (its template's default otherwise).
    #[arg(long, value_parser = clap::builder::BoolishValueParser::new())]
    thinking: Option<bool>,
    /// How hard a reasoning model thinks, for templates that read it (low, medium, high; none
    /// turns thinking off).
    #[arg(long)]
    effort: Option<String>,
    /// Tools the model may call: a JSON file with a list of OpenAI-shaped function tools. Its
    /// calls are printed as JSON lines on stdout (this command does not run them).
    #[arg(long, value_name = "FILE")]
    tools: Option<std::path::PathBuf>,
    /// auto (the default), required, none, or the name of a tool the reply must call.
    #[arg(long, default_value = "auto")]
    tool_choice: String,
}

/// What every turn of this chat shares: the tools, thinking and sampling.
struct TurnSettings {
    tools: Tools,
    thinking: Thinking,
    sampling: SamplingParams,
}

impl Args {
    fn turn_settings(&self, sampling: SamplingParams) -> anyhow::Result<TurnSettings> {
        let definitions: Vec<serde_json::Value> = match &self.tools {
            Some(path) => {
                let text = std::fs::read_to_string(path).with_context(|| format!("reading the tools in {}", path.display()))?;
                serde_json::from_str(&text).with_context(|| format!("{} is not a JSON list of tools", path.display()))?
            }
            None => vec![],
        };
        let choice = match self.tool_choice.as_str() {
            "auto" => ToolChoice::Auto,
            "required" => ToolChoice::Required,
            "none" => ToolChoice::None,
            name => ToolChoice::Named(name.to_string()),
        };
        let tools = Tools::from_definitions(definitions, choice).context("--tool-choice")?;
        Ok(TurnSettings { tools, thinking: Thinking { enabled: self.thinking, effort: self.effort.clone() }, sampling })
    }
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let (engine, id, info) = args.model.load(false)?;
    let settings = args.turn_settings(args.sampling.apply(&info.default_sampling, args.max_tokens))?;
    let mut messages: Vec<ChatMessage> = args.system.iter().map(|s| ChatMessage::system(s.clone())).collect();

    let mut attached = args.media.items();
    let mut documents = Vec::new();
    for path in &args.documents {
        let document = confab_documents::read_document_file(path).with_context(|| format!("reading {}", path.display()))?;
        documents.push(confab_documents::render_for_prompt(&document, false));
    }
    if let Some(question) = &args.prompt {
        messages.push(ChatMessage::user(confab_documents::with_documents(&documents, question)).with_media(attached));
        reply(&engine, id, &info, &messages, &settings, args.stats)?;
        return Ok(std::process::ExitCode::SUCCESS);
    }

    eprintln!(
        "{} ({}). Empty line or Ctrl-D to quit; /image, /audio or /video PATH attaches to the next message.",
        info.path.display(),
        info.architecture
    );
    let stdin = std::io::stdin();
    loop {
        eprint!("> ");
        let mut line = String::new();
        if stdin.lock().read_line(&mut line)? == 0 || line.trim().is_empty() {
            return Ok(std::process::ExitCode::SUCCESS);
        }
        let line = line.trim_end();
        if let Some(item) = attachment(line) {
            eprintln!("[attached {}]", item.file_name());
            attached.push(item);
            continue;
        }
        let text = confab_documents::with_documents(&std::mem::take(&mut documents), line);
        messages.push(ChatMessage::user(text).with_media(std::mem::take(&mut attached)));
        let answer = reply(&engine, id, &info, &messages, &settings, args.stats)?;
        messages.push(ChatMessage::assistant(answer));
    }
}

/// `/image PATH`, `/audio PATH` or `/video PATH`.
fn attachment(line: &str) -> Option<MediaItem> {
    let (command, path) = line.split_once(' ')?;
    match command {
        "/image" => Some(MediaItem::image(path.trim())),
        "/audio" => Some(MediaItem::audio(path.trim())),
        "/video" => Some(MediaItem::video(path.trim())),
        _ => None,
    }
}

/// Streams one reply and returns its answer, read as the app reads it: the reasoning goes to
/// stderr, the answer to stdout and into the conversation, each call as a JSON line on stdout.
fn reply(
    engine: &Engine,
    id: ModelId,
    model: &ModelInfo,
    messages: &[ChatMessage],
    settings: &TurnSettings,
    stats: bool,
) -> anyhow::Result<String> {
    let mut turn = ChatTurn::new(Prompt::Chat(messages.to_vec()), settings.sampling.clone());
    turn.tools = settings.tools.clone();
    turn.thinking = settings.thinking.clone();
    // A long chat goes on: its oldest turns are left out, as in the app.
    turn.context_policy = ContextPolicy::DropOldestTurns;
    let mut reader = ReplyReader::new(model, &turn.tools);
    let mut text = String::new();
    let mut stdout = std::io::stdout().lock();
    for event in engine.generate(turn.request(model, id)?).flat_map(|event| reader.read(event)) {
        match event {
            TurnEvent::Reasoning(thought) => eprint!("{thought}"),
            TurnEvent::Text(answer) => {
                write!(stdout, "{answer}")?;
                text.push_str(&answer);
            }
            TurnEvent::ToolCall { id, name, arguments } => {
                writeln!(stdout, "{}", serde_json::json!({ "id": id, "name": name, "arguments": arguments }))?
            }
            TurnEvent::Done { usage, timings, .. } if stats => eprintln!(
                "\n[{} prompt ({} cached), {} generated; {:.0} ms to first token, {:.1} tok/s]",
                usage.prompt, usage.cached, usage.generated, timings.time_to_first_token_ms, timings.decode_tokens_per_s
            ),
            TurnEvent::Plan(plan) => {
                if plan.dropped_messages > 0 {
                    eprintln!("[{} earlier messages left out to fit the context]", plan.dropped_messages);
                }
                if stats {
                    print_media(&plan);
                }
            }
            TurnEvent::Failed(e) => return Err(e.into()),
            _ => {}
        }
        stdout.flush()?;
    }
    writeln!(std::io::stdout())?;
    Ok(text)
}
