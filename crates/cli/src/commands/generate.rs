//! `confab generate`: one prompt in, tokens out; machine-readable with --json.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use confab_engine::ChatMessage;
use confab_engine::{DtypeChoice, LoadOptions};
use confab_engine::{
    Engine, Event, ModelId, Plan, Prompt, PromptLookup, Request, Speculative, SpeculativeStats, StopReason, Timings, Usage,
    DEFAULT_MAX_DRAFT, MTP_MAX_DRAFT,
};
use confab_engine::{SamplingChoices, SamplingParams};

use super::common::{MediaArgs, ModelArgs};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    model: ModelArgs,
    /// The user's message (sent through the model's chat template unless --raw).
    #[arg(long, conflicts_with = "prompt_ids")]
    prompt: Option<String>,
    /// Token ids, comma-separated, used as they are.
    #[arg(long, value_delimiter = ',')]
    prompt_ids: Option<Vec<u32>>,
    /// Use --prompt as raw text, without the chat template.
    #[arg(long)]
    raw: bool,
    #[command(flatten)]
    media: MediaArgs,
    #[arg(long, default_value_t = 256)]
    max_tokens: u32,
    #[command(flatten)]
    sampling: SamplingArgs,
    /// Save the first generated step's logits (float32 .npy).
    #[arg(long)]
    logits: Option<PathBuf>,
    /// Print one JSON object: ids, text, usage, speculative (its rates, where it ran), timings,
    /// plan (with its media entries).
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    speculative: SpeculativeArgs,
}

/// Speculative decoding flags (the plan says when a request cannot use it). A greedy reply is
/// the one plain decoding gives; a sampled one comes from the same distribution.
#[derive(clap::Args, Clone)]
pub struct SpeculativeArgs {
    /// Propose the tokens that followed the latest earlier occurrence of the last few tokens in
    /// the prompt or the reply so far (no second model; strong for quoting and editing).
    #[arg(long, conflicts_with_all = ["draft_model", "mtp"])]
    pub prompt_lookup: bool,
    /// The model's own multi-token-prediction head (Qwen3.5 checkpoints carrying `mtp.*`
    /// weights) proposes the next tokens from its last hidden state.
    #[arg(long, conflicts_with = "draft_model")]
    pub mtp: bool,
    /// A smaller model sharing this model's vocabulary (a folder or .gguf) proposes the next
    /// tokens, decoding greedily on a state of its own.
    #[arg(long, value_name = "PATH")]
    pub draft_model: Option<PathBuf>,
    /// Prompt lookup: the longest n-gram matched.
    #[arg(long, default_value_t = PromptLookup::default().ngram, requires = "prompt_lookup")]
    pub lookup_ngram: usize,
    /// The most tokens proposed in one step (default: 15 for --prompt-lookup, 8 for a draft
    /// model, 3 for --mtp).
    #[arg(long)]
    pub max_draft: Option<usize>,
}

impl SpeculativeArgs {
    /// The method asked for, with the draft model (loaded in `engine` to draft for `model`;
    /// refused where its vocabulary differs) where there is one.
    pub fn method(&self, engine: &Engine, model: ModelId, dtype: DtypeChoice) -> anyhow::Result<Option<Speculative>> {
        if let Some(path) = &self.draft_model {
            let options = LoadOptions { dtype, ..Default::default() };
            let (model, _) =
                engine.load_draft(model, path, options, |_| {}).with_context(|| format!("loading the draft model {}", path.display()))?;
            return Ok(Some(Speculative::DraftModel { model, max_draft: self.max_draft.unwrap_or(DEFAULT_MAX_DRAFT) }));
        }
        if self.mtp {
            return Ok(Some(Speculative::Mtp { max_draft: self.max_draft.unwrap_or(MTP_MAX_DRAFT) }));
        }
        let max_draft = self.max_draft.unwrap_or(PromptLookup::default().max_draft);
        Ok(self.prompt_lookup.then_some(Speculative::PromptLookup(PromptLookup { ngram: self.lookup_ngram, max_draft })))
    }

    fn asked(&self) -> bool {
        self.prompt_lookup || self.mtp || self.draft_model.is_some()
    }
}

/// One line per media item on stderr: what it is and where its tower output came from.
pub fn print_media(plan: &Plan) {
    for m in &plan.media {
        eprintln!("[{:?} {} ({}…): {} soft tokens, encoder: {:?}]", m.kind, m.file, m.hash, m.soft_tokens, m.encoder);
    }
}

/// Sampling flags shared by generate and chat; unset flags keep the model's defaults.
#[derive(clap::Args, Clone)]
pub struct SamplingArgs {
    #[arg(long)]
    pub temperature: Option<f32>,
    #[arg(long)]
    pub top_k: Option<i32>,
    #[arg(long)]
    pub top_p: Option<f32>,
    #[arg(long)]
    pub min_p: Option<f32>,
    #[arg(long)]
    pub repetition_penalty: Option<f32>,
    #[arg(long)]
    pub seed: Option<u64>,
    /// Stop when this text appears (repeatable); it is not printed.
    #[arg(long)]
    pub stop: Vec<String>,
}

impl SamplingArgs {
    /// The model's defaults with the flags given over them (`SamplingParams::with_choices`, the
    /// rule the app and the server use too); `--stop` adds to the model's stop strings.
    pub fn apply(&self, defaults: &SamplingParams, max_tokens: u32) -> SamplingParams {
        let choices = SamplingChoices {
            temperature: self.temperature,
            top_k: self.top_k,
            top_p: self.top_p,
            min_p: self.min_p,
            repetition_penalty: self.repetition_penalty,
            seed: self.seed,
            max_tokens: Some(max_tokens),
            stop: self.stop.clone(),
            ..SamplingChoices::default()
        };
        defaults.with_choices(&choices)
    }
}

#[derive(serde::Serialize, Default)]
struct Output {
    ids: Vec<u32>,
    text: String,
    stop_reason: Option<StopReason>,
    usage: Usage,
    /// Speculative decoding's acceptance rate and tokens per verifying pass, where it ran.
    speculative: Option<SpeculativeStats>,
    timings: Timings,
    /// From handing the request to the engine to its first token, milliseconds: the engine's
    /// time to first token plus the template, tokenizing and queueing before it (the part a
    /// person waits for after pressing Enter, which bench/window.py sets the window against).
    request_to_first_token_ms: Option<f64>,
    plan: Option<Plan>,
}

pub fn run(args: Args) -> anyhow::Result<std::process::ExitCode> {
    if !args.media.is_empty() && (args.raw || args.prompt.is_none()) {
        bail!("--image, --audio and --video go with a chat --prompt (not --raw or --prompt-ids)");
    }
    let prompt = match (&args.prompt, &args.prompt_ids) {
        (Some(text), _) if args.raw => Prompt::Text(text.clone()),
        (Some(text), _) => Prompt::Chat(vec![ChatMessage::user(text.clone()).with_media(args.media.items())]),
        (None, Some(ids)) => Prompt::Tokens(ids.clone()),
        (None, None) => bail!("give --prompt TEXT or --prompt-ids 1,2,3"),
    };
    let (engine, id, info) = args.model.load(!args.json)?;
    let mut request = Request::new(id, prompt, args.sampling.apply(&info.default_sampling, args.max_tokens));
    request.logits_path = args.logits.clone();
    request.speculative = args.speculative.method(&engine, id, args.model.dtype)?;

    let mut out = Output::default();
    let mut stdout = std::io::stdout().lock();
    let requested = std::time::Instant::now();
    for event in engine.generate(request) {
        match event {
            Event::Plan(plan) => {
                if !args.json {
                    print_media(&plan);
                    if let (true, Some(why)) = (args.speculative.asked(), &plan.speculative_declined) {
                        eprintln!("[no speculative decoding: {why}]");
                    }
                    if let (Some(_), Some(why)) = (args.model.kv_bits, &plan.kv_quantization_declined) {
                        eprintln!("[keys/values quantization: {why}]");
                    }
                }
                out.plan = Some(plan);
            }
            Event::Token { id, text } => {
                out.request_to_first_token_ms.get_or_insert_with(|| requested.elapsed().as_secs_f64() * 1e3);
                out.ids.push(id);
                out.text.push_str(&text);
                if !args.json {
                    write!(stdout, "{text}")?;
                    stdout.flush()?;
                }
            }
            Event::Text(text) => {
                out.text.push_str(&text);
                if !args.json {
                    write!(stdout, "{text}")?;
                }
            }
            Event::Done { reason, usage, timings } => {
                out.stop_reason = Some(reason);
                out.speculative = usage.speculative();
                out.usage = usage;
                out.timings = timings;
            }
            // Printed whole as each finishes (its tokens); the forming canvas is the app's.
            Event::Canvas(_) | Event::Queued { .. } => {}
            Event::Error(e) => return Err(e.into()),
        }
    }
    if args.json {
        writeln!(stdout, "{}", serde_json::to_string_pretty(&out)?)?;
    } else {
        let t = &out.timings;
        writeln!(stdout)?;
        eprintln!(
            "[{} prompt tokens, {} generated; {:.0} ms to first token, prefill {:.1} tok/s, decode {:.1} tok/s]",
            out.usage.prompt, out.usage.generated, t.time_to_first_token_ms, t.prefill_tokens_per_s, t.decode_tokens_per_s
        );
        if let Some(s) = out.speculative {
            eprintln!(
                "[speculative: {} of {} proposed tokens accepted ({:.0}%), {:.2} tokens per verifying pass{}]",
                s.accepted,
                s.proposed,
                s.acceptance_rate * 100.0,
                s.tokens_per_step,
                match s.from_grammar {
                    0 => String::new(),
                    n => format!("; {n} forced by the grammar fed as drafts"),
                }
            );
        }
        let canvases = &out.usage.steps_per_canvas;
        if !canvases.is_empty() {
            eprintln!("[denoising: {} canvases, steps per canvas {canvases:?}]", canvases.len());
        }
    }
    Ok(std::process::ExitCode::SUCCESS)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Parser)]
    struct Flags {
        #[arg(long)]
        max_tokens: u32,
        #[command(flatten)]
        sampling: SamplingArgs,
    }

    /// tests/sampling: the request the app and the server send too, over the model's own defaults.
    #[test]
    fn the_same_request_samples_alike() {
        let folder = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/sampling");
        let read =
            |name: &str| -> serde_json::Value { serde_json::from_str(&std::fs::read_to_string(folder.join(name)).unwrap()).unwrap() };
        let defaults = SamplingParams::model_defaults(Some(&read("generation_config.json"))).unwrap();
        let expected: SamplingParams = serde_json::from_value(read("expected.json")).unwrap();
        let flags = Flags::parse_from(["confab", "--temperature", "0.2", "--top-p", "0.5", "--max-tokens", "64", "--seed", "9"]);
        assert_eq!(flags.sampling.apply(&defaults, flags.max_tokens), expected);
        // --stop adds to the model's stop string.
        let flags = Flags::parse_from(["confab", "--max-tokens", "64", "--stop", "END"]);
        assert_eq!(flags.sampling.apply(&defaults, flags.max_tokens).stop, ["<|im_end|>", "END"]);
    }
}
