//! What callers send the engine and what they get back.

use std::path::PathBuf;

use crate::constraint::Constraint;
use crate::error::EngineError;
use crate::media::MediaKind;
use crate::sample::SamplingParams;
use crate::text::{ChatMessage, ChatOptions};

/// A loaded model, as the engine thread knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
pub struct ModelId(pub u64);

#[derive(Debug, Clone)]
pub enum Prompt {
    /// Rendered with the model's chat template, ending where the assistant's reply begins.
    /// Messages may carry images, audio clips and videos (`ChatMessage::media`).
    Chat(Vec<ChatMessage>),
    /// A conversation whose final message (a reply cut short) the model writes more of: rendered
    /// as `Chat` is, but ending right after that message's text, with no end of turn and no
    /// generation prompt (`ChatTemplate::render_continuation`). Messages may carry media too.
    Continue(Vec<ChatMessage>),
    /// Used as it is (tokenized with the tokenizer's own special-token rules).
    Text(String),
    /// Token ids, for tests and benchmarks.
    Tokens(Vec<u32>),
}

#[derive(Debug, Clone)]
pub struct Request {
    pub model: ModelId,
    pub prompt: Prompt,
    pub sampling: SamplingParams,
    /// Prompt tokens per prefill step; the cache is evaluated between chunks so a long prompt
    /// never builds one huge graph, and cancellation is checked there.
    pub chunk_size: usize,
    /// Save the first generated step's logits (float32 .npy) here.
    pub logits_path: Option<PathBuf>,
    /// Keep generating through end-of-sequence tokens (benchmarks).
    pub ignore_eos: bool,
    /// Start from the longest cached prefix (default); off for cold measurements.
    pub reuse_prefix: bool,
    /// What to do when the prompt is longer than the context (default: refuse).
    pub context_policy: ContextPolicy,
    /// Tools, template switches and a forced start of the reply, for conversations.
    pub chat: ChatOptions,
    /// The reply's text keeps the model's own markup, for callers that read it with a
    /// `ReplyParser`: the special tokens its reply format reads, and the start of a reasoning
    /// block the prompt opened (or `ChatOptions::reply_prefix`) as the reply's first text.
    pub reply_markup: bool,
    /// What the reply must match (a JSON Schema, a regex, a Lark grammar); `None`: free text.
    pub constraint: Option<Constraint>,
    /// With a constraint: feed the tokens its grammar forces without sampling them, in the
    /// forward pass of the token before them (default on; off to compare, or to sample every
    /// token as the unconstrained model would).
    pub grammar_jump: bool,
    /// Speculative decoding: cheap proposals for the next tokens, checked by the model in one
    /// forward pass; a greedy reply is the one plain decoding gives, a sampled one is drawn
    /// from the same distribution (`None`: plain decoding). The plan says when the request
    /// cannot use it, and why.
    pub speculative: Option<Speculative>,
    /// For models that write by denoising: where the canvas loop's randomness comes from
    /// (`None`: seeded from `sampling.seed`, or afresh each request without one).
    pub noise: Option<DenoisingNoise>,
    /// For models that write by denoising: send the canvas as each step leaves it
    /// (`Event::Canvas` with its pieces), for a view of the canvas forming; off by default, as
    /// it decodes every position's token at every step.
    pub canvas_steps: bool,
}

/// The randomness of a denoising model's canvas loop (`generate::denoise`).
#[derive(Debug, Clone, PartialEq)]
pub enum DenoisingNoise {
    /// Drawn from a generator with this seed: the same seed, the same reply.
    Seeded(u64),
    /// Recorded draws replayed in order (a reference implementation's, for tests): every random
    /// canvas (the initial one of each canvas, then one per step for renoising), and per step
    /// the uniforms each position's token is sampled with (inverse CDF).
    Replay { canvases: Vec<Vec<u32>>, uniforms: Vec<Vec<f64>> },
}

/// Where speculative decoding takes its proposals from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Speculative {
    /// The tokens that followed an earlier occurrence of the sequence's last few tokens, in the
    /// prompt or the reply so far (the one agreeing with the sequence furthest back): no
    /// second model; strong where the reply quotes or edits its prompt.
    PromptLookup(PromptLookup),
    /// The greedy choices of another model loaded in the same engine (a smaller one, sharing
    /// this model's vocabulary), `max_draft` of them per step, each from the draft's own state.
    DraftModel { model: ModelId, max_draft: usize },
    /// The model's own multi-token-prediction head (Qwen3.5's `mtp.*` weights), drafting
    /// `max_draft` tokens per step from the model's last hidden state, each fed back to it.
    Mtp { max_draft: usize },
}

/// Prompt lookup's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PromptLookup {
    /// The longest n-gram matched (shorter ones, down to 2, are tried when it has no earlier
    /// occurrence).
    pub ngram: usize,
    /// The most tokens proposed in one step (fewer where the source agrees with the sequence
    /// for fewer tokens).
    pub max_draft: usize,
}

/// The most tokens a draft proposes in one step, unless the request says otherwise.
pub const DEFAULT_MAX_DRAFT: usize = 8;

/// The most tokens prompt lookup proposes in one step, unless the request says otherwise: a
/// pass of 16 positions, the most a lone row verifies at once. Its proposals cost nothing to
/// make and are only that long where the reply has been copying for a while.
pub const LOOKUP_MAX_DRAFT: usize = 15;

impl Default for PromptLookup {
    fn default() -> Self {
        Self { ngram: 3, max_draft: LOOKUP_MAX_DRAFT }
    }
}

impl Speculative {
    /// The method's name, as the plan reports it.
    pub fn name(&self) -> &'static str {
        match self {
            Speculative::PromptLookup(_) => "prompt_lookup",
            Speculative::DraftModel { .. } => "draft_model",
            Speculative::Mtp { .. } => "mtp",
        }
    }

    /// The draft model it runs, if any.
    pub fn draft_model(&self) -> Option<ModelId> {
        match self {
            Speculative::PromptLookup(_) | Speculative::Mtp { .. } => None,
            Speculative::DraftModel { model, .. } => Some(*model),
        }
    }

    /// The most tokens it proposes in one step.
    pub fn max_draft(&self) -> usize {
        match self {
            Speculative::PromptLookup(settings) => settings.max_draft,
            Speculative::DraftModel { max_draft, .. } | Speculative::Mtp { max_draft } => *max_draft,
        }
    }
}

/// The multi-token-prediction head's drafts per step by default: Qwen3.5's head is trained for
/// the token after next; each further draft feeds it its own output, and agrees less often.
pub const MTP_MAX_DRAFT: usize = 3;

impl Speculative {
    /// The method named `name` (`prompt_lookup`, `mtp` or `draft_model`, with `-` or `_`),
    /// with default settings; `draft` is the draft model loaded beside the model, if any.
    pub fn named(name: &str, draft: Option<ModelId>) -> Result<Self, EngineError> {
        match (name, draft) {
            ("prompt-lookup" | "prompt_lookup", _) => Ok(Speculative::PromptLookup(PromptLookup::default())),
            ("mtp", _) => Ok(Speculative::Mtp { max_draft: MTP_MAX_DRAFT }),
            ("draft-model" | "draft_model", Some(model)) => Ok(Speculative::DraftModel { model, max_draft: DEFAULT_MAX_DRAFT }),
            ("draft-model" | "draft_model", None) => Err(EngineError::NoDraftModel),
            (other, _) => {
                Err(EngineError::invalid("speculative", format!("unknown method {other:?}; expected prompt_lookup, mtp or draft_model")))
            }
        }
    }
}

impl std::str::FromStr for Speculative {
    type Err = EngineError;
    /// `prompt-lookup` (or `prompt_lookup`) or `mtp`, with default settings (`Speculative::named`).
    fn from_str(s: &str) -> Result<Self, EngineError> {
        Speculative::named(s, None)
    }
}

/// What to do with a prompt longer than the model's context.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ContextPolicy {
    /// Refuse it (`EngineError::ContextOverflow`): the caller decides what to cut. The server
    /// does this, as OpenAI's API does.
    #[default]
    Refuse,
    /// Leave out the oldest turns until the prompt leaves room for a reply, as LM Studio's
    /// default ("truncate middle") does (runtime/context.rs). The system prompt and the newest message always
    /// stay; when they alone are too long, the request is refused.
    DropOldestTurns,
}

impl Prompt {
    /// The conversation, for the prompts that are one.
    pub fn messages(&self) -> Option<&[ChatMessage]> {
        match self {
            Prompt::Chat(messages) | Prompt::Continue(messages) => Some(messages),
            Prompt::Text(_) | Prompt::Tokens(_) => None,
        }
    }

    /// Whether any message carries an image or clip.
    pub fn has_media(&self) -> bool {
        self.messages().is_some_and(|messages| messages.iter().any(|m| !m.media.is_empty()))
    }
}

impl Request {
    pub fn new(model: ModelId, prompt: Prompt, sampling: SamplingParams) -> Self {
        Self {
            model,
            prompt,
            sampling,
            chunk_size: crate::defaults::PREFILL_CHUNK_TOKENS,
            logits_path: None,
            ignore_eos: false,
            reuse_prefix: true,
            context_policy: ContextPolicy::default(),
            chat: ChatOptions::default(),
            reply_markup: false,
            constraint: None,
            grammar_jump: true,
            speculative: None,
            noise: None,
            canvas_steps: false,
        }
    }
}

/// Decided before any work: what the request reuses, and why not when it doesn't.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Plan {
    /// How the reply is written: `autoregressive` (a token per forward pass) or `denoising`
    /// (canvases of tokens in parallel, for block diffusion models).
    pub method: &'static str,
    /// Why the row is not batched with others (the denoising method steps each row alone).
    pub batching_declined: Option<String>,
    pub prompt_tokens: usize,
    pub reused_tokens: usize,
    /// `memory`, `disk` or `none`.
    pub reuse_source: &'static str,
    pub reuse_declined: Option<String>,
    /// Set when the reused state came from a checkpoint: layers that cannot be cut back
    /// (rotating windows, recurrent state) resume at the latest checkpoint at or before the
    /// prefix the prompt shares with a cached conversation.
    pub resumed_from_checkpoint: Option<crate::cache::CheckpointResume>,
    /// Checkpoints this request's prefill takes (0 for models whose state can be cut back).
    pub checkpoints: usize,
    pub chunk_size: usize,
    pub chunks: usize,
    /// Every image, clip and video in the prompt, in order.
    pub media: Vec<MediaPlan>,
    /// Vision and audio tower runs this request needs (encoder-cache misses).
    pub tower_runs: usize,
    /// The oldest turns left out so that the conversation fits the context (see
    /// `ContextPolicy::DropOldestTurns`).
    pub dropped_messages: usize,
    /// The kind of constraint the reply follows (`json_schema`, `json_object`, `regex`, `lark`).
    pub constraint: Option<&'static str>,
    /// Tokens the grammar forces are fed without sampling: with the sampled token before them
    /// in one forward pass when the row steps alone, one per step in a batch.
    pub grammar_jump: bool,
    /// Why a constrained reply goes without grammar jump.
    pub grammar_jump_declined: Option<String>,
    /// The speculative decoding method the reply uses (`prompt_lookup`, `draft_model`, `mtp`);
    /// `None` for plain decoding. Rows speculate alone and two together (larger batches step plainly).
    pub speculative: Option<&'static str>,
    /// Why the reply goes without speculative decoding (the request did not ask for it, or
    /// cannot use it).
    pub speculative_declined: Option<String>,
    /// The bits its keys and values are quantized to (`None`: the compute dtype).
    pub kv_bits: Option<u8>,
    /// Elements per quantization scale and bias, where quantized.
    pub kv_group_size: Option<u32>,
    /// Why layers keep full-precision keys and values though the model was loaded with a
    /// quantization (a recurrent or rotating-window state, heads the groups do not divide).
    pub kv_quantization_declined: Option<String>,
}

/// One media item of a request's prompt, as the plan reports it.
#[derive(Debug, Clone, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct MediaPlan {
    pub kind: MediaKind,
    /// The file's name.
    pub file: String,
    /// The first 12 hex digits of the content hash.
    pub hash: String,
    /// Where its soft tokens start in the prompt.
    pub position: usize,
    pub soft_tokens: usize,
    /// A video's sampled frames (`None` for images and clips).
    pub frames: Option<usize>,
    /// Where its tower output comes from.
    pub encoder: EncoderUse,
}

/// How a media item's tower output is obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "lowercase")]
pub enum EncoderUse {
    /// The reused prefix already holds it: no tower output needed.
    Prefix,
    /// The encoder cache, in memory.
    Memory,
    /// The encoder cache's disk tier.
    Disk,
    /// Not cached: the tower runs.
    Miss,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum StopReason {
    /// An end-of-sequence token.
    Eos,
    StopString,
    MaxTokens,
    /// The model's context is full; or, for a reply without a token limit, the memory budget
    /// holds no more of it beside the running requests (the log says so).
    Context,
    Cancelled,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Usage {
    pub prompt: usize,
    /// Prompt tokens served from a cache instead of computed.
    pub cached: usize,
    pub generated: usize,
    /// Generated tokens its grammar forced: fed without being sampled or masked.
    pub forced: usize,
    /// Forward passes grammar jump saved: forced tokens that needed no pass of their own (fed
    /// with the token before them while the row stepped alone, or never fed because the reply
    /// ended there); in a batch, forced tokens ride along one per step.
    pub passes_saved: usize,
    /// What the sequence's state holds at the end, by kind.
    pub state_bytes: crate::state::StateBytes,
    /// Tokens speculative decoding proposed, and those of them the model agreed with (each
    /// accepted one is a token generated without a forward pass of its own).
    pub draft_proposed: usize,
    pub draft_accepted: usize,
    /// Verifying passes that checked proposals: (accepted + steps) / steps tokens came per
    /// such pass.
    pub draft_steps: usize,
    /// Tokens a constrained reply's grammar forced that verifying passes fed ahead of the
    /// proposals: free drafts, kept without checking (the grammar allows nothing else).
    pub draft_from_grammar: usize,
    /// The stop string that ended the reply (`StopReason::StopString`), as the request gave it:
    /// with several, the caller can say which (Anthropic's `stop_sequence`).
    pub stop_string: Option<String>,
    /// The denoising method's canvases: the decoder passes each took (empty for
    /// autoregressive replies).
    pub steps_per_canvas: Vec<usize>,
}

impl Usage {
    /// What speculative decoding did, in rates; `None` where it verified nothing.
    pub fn speculative(&self) -> Option<SpeculativeStats> {
        (self.draft_steps > 0 || self.draft_from_grammar > 0).then(|| SpeculativeStats {
            proposed: self.draft_proposed,
            accepted: self.draft_accepted,
            from_grammar: self.draft_from_grammar,
            verifying_passes: self.draft_steps,
            acceptance_rate: self.draft_accepted as f64 / self.draft_proposed.max(1) as f64,
            tokens_per_step: (self.draft_accepted + self.draft_steps) as f64 / self.draft_steps.max(1) as f64,
        })
    }
}

/// Speculative decoding's counts and rates for one reply (`Usage::speculative`).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct SpeculativeStats {
    pub proposed: usize,
    pub accepted: usize,
    /// Tokens the grammar forced, fed in verifying passes as free drafts.
    pub from_grammar: usize,
    pub verifying_passes: usize,
    /// The share of proposed tokens the model kept.
    pub acceptance_rate: f64,
    /// Tokens each verifying pass gave: the proposals kept and the model's own token after
    /// them (plain decoding gives 1 per pass).
    pub tokens_per_step: f64,
}

/// What a waiting request waits for (`Event::Queued`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum QueueReason {
    /// Memory: what it needs does not fit beside the running requests' (`BatchOptions::memory_budget`).
    Memory,
    /// A free row: as many requests run as may (`BatchOptions::max_rows`).
    Row,
}

/// A denoising reply's canvas, as `Event::Canvas` reports it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CanvasUpdate {
    /// Which of the reply's canvases, from 0.
    pub index: usize,
    /// The denoising steps it has taken.
    pub steps: usize,
    /// It is written: its tokens were streamed (`Token` events) just before this. A reply that
    /// ends within a canvas (end of turn, a stop string, the token limit) ends with `Done`
    /// instead.
    pub finished: bool,
    /// Before it is finished: every position's text as the step left it (empty once finished).
    pub pieces: Vec<CanvasPiece>,
}

/// One position of a canvas being denoised.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct CanvasPiece {
    /// The text of its token: the one the sampler accepted, else the model's current best guess
    /// (special tokens give none). Model output: show it as plain text.
    pub text: String,
    /// The sampler accepted it at this step; the rest are renoised before the next.
    pub accepted: bool,
}

#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Timings {
    pub time_to_first_token_ms: f64,
    pub prefill_tokens_per_s: f64,
    /// Generated tokens per second after the first. A denoising reply's tokens come a canvas at
    /// a time: its rate is every generated token over the time from the prompt's end to the
    /// reply's (canvas tokens per second).
    pub decode_tokens_per_s: f64,
    pub peak_memory_bytes: u64,
}

#[derive(Debug)]
pub enum Event {
    /// The request waits to start, before its plan (sent once, when it first has to wait):
    /// for memory, the running requests holding what the budget allows
    /// (`BatchOptions::memory_budget`), or for a free row; `ahead` requests wait before it.
    Queued {
        reason: QueueReason,
        ahead: usize,
    },
    Plan(Plan),
    Token {
        id: u32,
        text: String,
    },
    /// Text held back (an incomplete character, a possible stop string) released at the end.
    Text(String),
    /// A denoising reply's canvas (`Plan::method` is `denoising`): as each step leaves it, when
    /// the request asks (`Request::canvas_steps`), and once finished, after its tokens.
    Canvas(CanvasUpdate),
    Done {
        reason: StopReason,
        usage: Usage,
        timings: Timings,
    },
    Error(EngineError),
}
