//! `confab chat`: talk to a model in the terminal, or ask one question with --prompt.

use std::io::{BufRead, Write};

use confab_engine::media::MediaItem;
use confab_engine::runtime::{ContextPolicy, Engine, Event, ModelId, Prompt, Request};
use confab_engine::sample::SamplingParams;
use confab_engine::text::{ChatMessage, ReplyFormat, ReplyParser, ReplyPart};

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
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    let (engine, id, info) = args.model.load(false)?;
    let sampling = args.sampling.apply(&info.default_sampling, args.max_tokens);
    let mut messages: Vec<ChatMessage> = args.system.iter().map(|s| ChatMessage::system(s.clone())).collect();

    let mut attached = args.media.items();
    if let Some(question) = &args.prompt {
        messages.push(ChatMessage::user(question.clone()).with_media(attached));
        reply(&engine, id, info.reply_format, &messages, &sampling, args.stats)?;
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
        messages.push(ChatMessage::user(line.to_string()).with_media(std::mem::take(&mut attached)));
        let answer = reply(&engine, id, info.reply_format, &messages, &sampling, args.stats)?;
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

/// Streams one reply and returns its answer. A model that reasons in a block (or channel) of
/// its own has its markup kept and read as the app reads it: the reasoning goes to stderr, the
/// answer to stdout and into the conversation.
fn reply(
    engine: &Engine,
    id: ModelId,
    format: ReplyFormat,
    messages: &[ChatMessage],
    sampling: &SamplingParams,
    stats: bool,
) -> anyhow::Result<String> {
    let mut request = Request::new(id, Prompt::Chat(messages.to_vec()), sampling.clone());
    // A long chat goes on: its oldest turns are left out, as in the app.
    request.context_policy = ContextPolicy::DropOldestTurns;
    request.reply_markup = format.reasoning.is_some();
    let mut parser = request.reply_markup.then(|| ReplyParser::new(format, false, None));
    let mut text = String::new();
    let mut stdout = std::io::stdout().lock();
    let mut show = |parts: Vec<ReplyPart>, text: &mut String| -> std::io::Result<()> {
        for part in parts {
            match part {
                ReplyPart::Reasoning(thought) => eprint!("{thought}"),
                ReplyPart::Content(answer) => {
                    write!(stdout, "{answer}")?;
                    text.push_str(&answer);
                }
                ReplyPart::ToolCall(_) => {}
            }
        }
        stdout.flush()
    };
    for event in engine.generate(request) {
        match event {
            Event::Token { text: delta, .. } | Event::Text(delta) => match parser.as_mut() {
                Some(parser) => show(parser.push(&delta), &mut text)?,
                None => show(vec![ReplyPart::Content(delta)], &mut text)?,
            },
            Event::Done { usage, timings, .. } if stats => eprintln!(
                "\n[{} prompt ({} cached), {} generated; {:.0} ms to first token, {:.1} tok/s]",
                usage.prompt, usage.cached, usage.generated, timings.time_to_first_token_ms, timings.decode_tokens_per_s
            ),
            Event::Plan(plan) => {
                if plan.dropped_messages > 0 {
                    eprintln!("[{} earlier messages left out to fit the context]", plan.dropped_messages);
                }
                if stats {
                    print_media(&plan);
                }
            }
            Event::Error(e) => return Err(e.into()),
            _ => {}
        }
    }
    if let Some(parser) = parser.as_mut() {
        show(parser.finish(), &mut text)?;
    }
    writeln!(std::io::stdout())?;
    Ok(text)
}
