// Generated from the Rust types and the commands in src-tauri/src/commands/list.rs by
// src-tauri/src/ipc.rs. Do not edit: `UPDATE_IPC=1 cargo test -p confab-app ipc` rewrites it.
import type { Channel } from '@tauri-apps/api/core';

export type AppPaths = {
  /**
   * The SQLite file, attachments, settings.
   */
  data_dir: string,
  /**
   * The app's own models folder; the default model is installed here (by setup in a source
   * checkout, by the app itself from its package on first launch).
   */
  models_dir: string,
  /**
   * Prefix (KV) and encoder caches.
   */
  cache_dir: string,
};

/**
 * A stored attachment. When the same bytes are added twice, the first metadata is kept.
 */
export type Attachment = {
  hash: AttachmentHash,
  mime: string,
  size: number,
  original_name: string | null,
  width: number | null,
  height: number | null,
  duration_ms: number | null,
  /**
   * Unix milliseconds.
   */
  created_at: number,
};

/**
 * The SHA-256 of an attachment's bytes, 64 lowercase hex digits. Also the encoder cache key.
 */
export type AttachmentHash = string;

/**
 * How the positions of a whole sequence attend to each other when it is read in one pass with
 * nothing kept (what embedding models do).
 */
export type AttentionMode = "causal" | "bidirectional";

/**
 * One position of a canvas being denoised.
 */
export type CanvasPiece = {
  /**
   * The text of its token: the one the sampler accepted, else the model's current best guess
   * (special tokens give none). Model output: show it as plain text.
   */
  text: string,
  /**
   * The sampler accepted it at this step; the rest are renoised before the next.
   */
  accepted: boolean,
};

/**
 * A denoising reply's canvas, as `Event::Canvas` reports it.
 */
export type CanvasUpdate = {
  /**
   * Which of the reply's canvases, from 0.
   */
  index: number,
  /**
   * The denoising steps it has taken.
   */
  steps: number,
  /**
   * It is written: its tokens were streamed (`Token` events) just before this. A reply that
   * ends within a canvas (end of turn, a stop string, the token limit) ends with `Done`
   * instead.
   */
  finished: boolean,
  /**
   * Before it is finished: every position's text as the step left it (empty once finished).
   */
  pieces: Array<CanvasPiece>,
};

/**
 * A resume from a checkpoint, for the plan.
 */
export type CheckpointResume = {
  /**
   * Where the checkpoint is.
   */
  position: number,
  /**
   * How far the request matched the cached sequence.
   */
  shared: number,
};

/**
 * What the window's meter shows, and what it warns about before sending.
 */
export type ContextUse = {
  /**
   * Tokens of the chat as it would be sent now, the draft as its newest message.
   */
  used: number,
  /**
   * Tokens of the system prompt and the draft alone, as a new chat would send them.
   */
  alone: number,
  /**
   * What a prompt may take: the context less the room kept for the reply. Past it the
   * oldest turns are left out (`ContextPolicy::DropOldestTurns`); a newest message that is
   * past it alone is refused.
   */
  limit: number,
  /**
   * The model's context length.
   */
  context: number,
};

export type Conversation = {
  id: ConversationId,
  title: string,
  /**
   * Unix milliseconds.
   */
  created_at: number,
  /**
   * Unix milliseconds; bumped by new messages, finished replies and edits to the conversation.
   */
  updated_at: number,
  model: string | null,
  system_prompt: string | null,
  /**
   * The message whose path from the root the UI shows; `None` while empty.
   */
  current_leaf: MessageId | null,
  /**
   * The chat's thinking switch (on by default), for models whose template has one.
   */
  thinking: boolean,
};

/**
 * Where the next page starts: the last conversation of the previous one.
 */
export type ConversationCursor = {
  updated_at: number,
  id: ConversationId,
};

export type ConversationId = number;

export type ConversationPage = {
  conversations: Array<Conversation>,
  /**
   * Pass this to get the following page; `None` on the last page.
   */
  next: ConversationCursor | null,
};

export type DefaultModelStatus = {
  name: string,
  path: string,
  present: boolean,
};

/**
 * The canvas loop's parameters, from the checkpoint (config.json's canvas length and
 * generation_config.json's denoising keys), checked when the model loads.
 */
export type DenoisingParams = {
  /**
   * Tokens written in parallel per canvas.
   */
  canvas_length: number,
  /**
   * Denoising steps per canvas at most.
   */
  max_steps: number,
  /**
   * The entropy-bound sampler accepts the most certain tokens while their summed entropy,
   * less the largest, stays within this bound; the rest are renoised.
   */
  entropy_bound: number,
  /**
   * The temperature falls linearly from `t_max` (first step) towards `t_min` (last).
   */
  t_min: number,
  t_max: number,
  /**
   * A canvas stops early once its argmax has not changed for this many steps (0: no
   * stability asked) and the mean entropy of its tempered logits is below
   * `confidence_threshold`.
   */
  stability_threshold: number,
  confidence_threshold: number,
};

/**
 * What an attachment's chip says about a document.
 */
export type DocumentInfo = {
  /**
   * The format as a person names it ("PDF", "Markdown", "Rust source").
   */
  format: string,
  /**
   * Pages, for a format that has them (PDF).
   */
  pages: number | null,
  /**
   * How it was read, where a person should know ("pages 3, 4 have no text layer").
   */
  notes: Array<string>,
};

/**
 * One download, as the window shows it.
 */
export type Download = {
  /**
   * The repository, and the files asked for when not the whole model.
   */
  id: string,
  repo: string,
  /**
   * Empty: the model's files as confab-hub chooses them.
   */
  files: Array<string>,
  status: DownloadStatus,
  /**
   * The file being fetched.
   */
  file: string,
  bytes: number,
  total: number,
  /**
   * This run's speed (not counting what a resumed partial already had).
   */
  bytes_per_second: number,
  seconds_left: number | null,
  /**
   * Another download of the file is running (another window's, `confab pull`'s): this one
   * waits for it, then uses its file; `bytes` shows how far that one got. (Absent from
   * lists saved before it existed.)
   */
  waiting: boolean,
  /**
   * What went wrong and what to do, for a failed download.
   */
  error: string | null,
  /**
   * What the engine loads, once done.
   */
  model_path: string | null,
};

export type DownloadStatus = "running" | "paused" | "done" | "failed" | "cancelled";

/**
 * What the app and the server show about an embedding model.
 */
export type EmbeddingInfo = {
  dimensions: number,
  pooling: Pooling,
  attention: AttentionMode,
  normalized: boolean,
  max_tokens: number | null,
  /**
   * The names of its prompts (`query`, `document`, …).
   */
  prompts: Array<string>,
};

/**
 * How a media item's tower output is obtained.
 */
export type EncoderUse = "prefix" | "memory" | "disk" | "miss";

export type FolderEntry = {
  name: string,
  path: string,
  /**
   * It is a model (it has a `config.json`), holds `.gguf` files or is an Ollama store.
   */
  has_model: boolean,
};

/**
 * A folder as the picker shows it.
 */
export type FolderListing = {
  /**
   * The folder, absolute.
   */
  path: string,
  /**
   * The folder above it; `None` at the root.
   */
  parent: string | null,
  /**
   * Its subfolders, hidden ones (`.name`) left out, sorted by name.
   */
  folders: Array<FolderEntry>,
  /**
   * Models directly inside it: model folders (a `config.json`) and `.gguf` files. A model
   * folder added to the settings is searched deeper than this.
   */
  models_inside: number,
};

/**
 * Which reader a path needs, decided from what is on disk.
 */
export type Format = "Safetensors" | "Gguf";

/**
 * One search hit, with whether the engine runs what its tags say it is.
 */
export type HubModel = {
  id: string,
  downloads: number,
  likes: number,
  /**
   * "gguf", "safetensors", "mlx": what it comes as.
   */
  formats: Array<string>,
  /**
   * An architecture tag the engine runs.
   */
  runs: boolean,
};

/**
 * What the settings pane knows of the hub: never the token itself.
 */
export type HubSettings = {
  /**
   * Empty: `HF_ENDPOINT`, else the default.
   */
  endpoint: string,
  /**
   * The endpoint downloads use now.
   */
  effective_endpoint: string,
  token_set: boolean,
};

/**
 * Sent as the `document-index` event while a document's index is made.
 */
export type IndexProgress = {
  /**
   * The document's attachment hash.
   */
  hash: string,
  /**
   * Passages embedded so far, of `passages`.
   */
  embedded: number,
  passages: number,
  /**
   * The index is complete (or failed): the progress bar goes.
   */
  done: boolean,
};

/**
 * How keys and values are quantized: `bits` per element, one scale and bias per
 * `group_size` elements along head_dim.
 */
export type KvQuantization = {
  bits: number,
  group_size: number,
};

export type Loading = {
  path: string,
  /**
   * As the picker will show it once loaded (`display_name`).
   */
  name: string,
  stage: string,
  fraction: number,
};

export type MediaKind = "image" | "audio" | "video";

/**
 * One media item of a request's prompt, as the plan reports it.
 */
export type MediaPlan = {
  kind: MediaKind,
  /**
   * The file's name.
   */
  file: string,
  /**
   * The first 12 hex digits of the content hash.
   */
  hash: string,
  /**
   * Where its soft tokens start in the prompt.
   */
  position: number,
  soft_tokens: number,
  /**
   * A video's sampled frames (`None` for images and clips).
   */
  frames: number | null,
  /**
   * Where its tower output comes from.
   */
  encoder: EncoderUse,
};

export type Message = {
  id: MessageId,
  conversation_id: ConversationId,
  parent_id: MessageId | null,
  role: Role,
  /**
   * For a `Streaming` reply, the text appended so far. A thinking model's answer only.
   */
  content: string,
  /**
   * What a thinking model wrote before its answer (so far, while `Streaming`); `None` when
   * it wrote none.
   */
  reasoning: string | null,
  /**
   * How long the model thought: from its first reasoning to its answer's start (or the
   * reply's end). `None` while it still thinks, and for replies without reasoning.
   */
  reasoning_ms: number | null,
  status: MessageStatus,
  /**
   * Why generation failed, for status `Error` (and `Interrupted` when the cause is known).
   */
  error: string | null,
  /**
   * Unix milliseconds.
   */
  created_at: number,
  stats: ReplyStats | null,
  /**
   * An assistant reply's tool calls, in the order they were added (see tool_calls.rs).
   */
  tool_calls?: Array<ToolCall>,
};

export type MessageId = number;

/**
 * Where a message is in its life. Only assistant replies are ever anything but `Complete`.
 */
export type MessageStatus = "streaming" | "complete" | "stopped" | "error" | "interrupted";

export type MessageView = {
  message: Message,
  attachments: Array<Attachment>,
  siblings: Siblings,
  /**
   * A reply's citations: the document passages its prompt was given (documents too large
   * for the context are searched per question).
   */
  sources?: Array<ReplySource>,
};

/**
 * What `confab doctor` reports about MLX.
 */
export type MlxRuntime = {
  /**
   * The version libmlx reports at run time.
   */
  version: string,
  /**
   * The version of the wheel we built against.
   */
  built_against: string,
  /**
   * `cpu`, `metal` or `cuda-12`: the wheel that was linked.
   */
  backend: string,
  /**
   * `gpu` or `cpu`: MLX's default device.
   */
  device: string,
  /**
   * The libmlx that the dynamic loader actually mapped.
   */
  library: string | null,
  /**
   * Where MLX looks for its Metal kernels (macOS only).
   */
  metallib: string | null,
};

/**
 * What the app, the CLI and the server know and show about a loaded model (the window gets it
 * as is: `ModelState::loaded`).
 */
export type ModelInfo = {
  /**
   * As the picker shows it (`discover::display_name`).
   */
  name: string,
  path: string,
  architecture: string,
  format: Format,
  dtype: string,
  /**
   * Weights kept quantized in memory (false when dequantized at load).
   */
  quantized: boolean,
  context_length: number,
  vocab_size: number,
  /**
   * The weights' fingerprint, with the keys/values precision where quantized
   * (`cache::key::state_fingerprint`): the caches' identity for this model.
   */
  fingerprint: string,
  parameters: number,
  /**
   * What its weights (and towers) took in memory when it loaded, measured then.
   */
  weights_bytes: number,
  /**
   * The quantization its keys and values are held in; `None`: the compute dtype.
   */
  kv_quantization: KvQuantization | null,
  /**
   * Why layers keep full-precision keys and values though a quantization was asked for.
   */
  kv_quantization_declined: string | null,
  /**
   * Reads images (a vision tower is loaded).
   */
  vision: boolean,
  /**
   * Reads audio clips (an audio tower is loaded).
   */
  audio: boolean,
  /**
   * Reads videos (its vision tower and a video processor are loaded).
   */
  video: boolean,
  /**
   * Its chat template turns reasoning on and off with the `enable_thinking` switch
   * (as thinking models' templates do): the app offers that switch per chat.
   */
  thinking_switch: boolean,
  /**
   * Its chat template reads `reasoning_effort` (gpt-oss's harmony template writes it as
   * "Reasoning: low|medium|high"): the app offers the effort.
   */
  reasoning_effort: boolean,
  /**
   * An embedding model (sentence-transformers files in its folder): it gives vectors
   * (`Engine::embed`), not replies.
   */
  embedding: EmbeddingInfo | null,
  /**
   * A model that writes by denoising canvases: the canvas loop's parameters, from its
   * checkpoint (the same for every request).
   */
  denoising: DenoisingParams | null,
};

/**
 * Where a model was found.
 */
export type ModelSource = "Folder" | "Ollama";

/**
 * Sent as the `model-state` event on every change.
 */
export type ModelState = {
  loaded: ModelInfo | null,
  /**
   * The draft model loaded beside it for speculative decoding (Settings › Model).
   */
  draft: string | null,
  loading: Loading | null,
  error: string | null,
  /**
   * Counts the changes. Events and the `model_state` snapshot travel separately and can
   * arrive out of order: the window keeps the state with the highest revision.
   */
  revision: number,
};

export type ModelSummary = {
  name: string,
  path: string,
  source: ModelSource,
  format: Format,
  architecture: string,
  /**
   * Whether this build can run it: its architecture (`runs_here`) and, for a GGUF, its
   * tensor types (`gguf::unreadable_types`).
   */
  supported: boolean,
  /**
   * Why not, as the picker says it, when it cannot.
   */
  unsupported_reason: string | null,
  /**
   * `bf16`, `4-bit`, `Q4_1`, …
   */
  quantization: string,
  size_bytes: number,
  context_length: number | null,
  vision: boolean,
  audio: boolean,
  /**
   * Has a vision tower, a video token and a video processor config (the loaded model's
   * `ModelInfo::video` says for sure).
   */
  video: boolean,
  /**
   * The number of weights of its text model, where its configuration tells.
   */
  parameters: number | null,
  /**
   * About what its weights take in memory as loaded (a GGUF's tensors widened at load count
   * at their widened size).
   */
  weights_bytes: number,
  /**
   * About what it takes in memory: the weights as loaded (a GGUF's tensors widened at load count
   * at their widened size), plus the key/value cache of a conversation that fills its whole context
   * (the engine's default), in the dtype it computes in here.
   */
  memory_needed_bytes: number,
  /**
   * This machine's memory, to set `memory_needed_bytes` against.
   */
  machine_memory_bytes: number,
  /**
   * Whether it fits this machine (`model::memory::fits_in_memory`).
   */
  fits: boolean,
  /**
   * An embedding model (a sentence-transformers folder, `model::embedding`): it gives
   * vectors, not replies, so the chat picker does not offer it.
   */
  embedding: boolean,
  /**
   * Writes its replies by denoising canvases of tokens in parallel (block diffusion), its
   * family says; the loaded model's `ModelInfo::denoising` has its parameters.
   */
  denoising: boolean,
};

/**
 * Decided before any work: what the request reuses, and why not when it doesn't.
 */
export type Plan = {
  /**
   * How the reply is written: `autoregressive` (a token per forward pass) or `denoising`
   * (canvases of tokens in parallel, for block diffusion models).
   */
  method: string,
  /**
   * Why the row is not batched with others (the denoising method steps each row alone).
   */
  batching_declined: string | null,
  prompt_tokens: number,
  reused_tokens: number,
  /**
   * `memory`, `disk` or `none`.
   */
  reuse_source: string,
  reuse_declined: string | null,
  /**
   * Set when the reused state came from a checkpoint: layers that cannot be cut back
   * (rotating windows, recurrent state) resume at the latest checkpoint at or before the
   * prefix the prompt shares with a cached conversation.
   */
  resumed_from_checkpoint: CheckpointResume | null,
  /**
   * Checkpoints this request's prefill takes (0 for models whose state can be cut back).
   */
  checkpoints: number,
  chunk_size: number,
  chunks: number,
  /**
   * Every image, clip and video in the prompt, in order.
   */
  media: Array<MediaPlan>,
  /**
   * Vision and audio tower runs this request needs (encoder-cache misses).
   */
  tower_runs: number,
  /**
   * The oldest turns left out so that the conversation fits the context (see
   * `ContextPolicy::DropOldestTurns`).
   */
  dropped_messages: number,
  /**
   * The kind of constraint the reply follows (`json_schema`, `json_object`, `regex`, `lark`).
   */
  constraint: string | null,
  /**
   * Tokens the grammar forces are fed without sampling: with the sampled token before them
   * in one forward pass when the row steps alone, one per step in a batch.
   */
  grammar_jump: boolean,
  /**
   * Why a constrained reply goes without grammar jump.
   */
  grammar_jump_declined: string | null,
  /**
   * The speculative decoding method the reply uses (`prompt_lookup`, `draft_model`, `mtp`);
   * `None` for plain decoding. Rows speculate alone and two together (larger batches step plainly).
   */
  speculative: string | null,
  /**
   * Why the reply goes without speculative decoding (the request did not ask for it, or
   * cannot use it).
   */
  speculative_declined: string | null,
  /**
   * The bits its keys and values are quantized to (`None`: the compute dtype).
   */
  kv_bits: number | null,
  /**
   * Elements per quantization scale and bias, where quantized.
   */
  kv_group_size: number | null,
  /**
   * Why layers keep full-precision keys and values though the model was loaded with a
   * quantization (a recurrent or rotating-window state, heads the groups do not divide).
   */
  kv_quantization_declined: string | null,
};

/**
 * How a sequence's hidden states become one vector.
 */
export type Pooling = "mean" | "last_token" | "cls";

/**
 * A provider as the settings pane sends it. `api_key`: `None` keeps the saved one, an empty
 * string removes it.
 */
export type ProviderInput = {
  id: number | null,
  name: string,
  base_url: string,
  api_key: string | null,
};

export type ProviderModel = {
  id: string,
  context_length: number | null,
  vision: boolean,
  audio: boolean,
  /**
   * True when the endpoint listed the model's input kinds; false: `vision` and `audio`
   * are the user's marks.
   */
  inputs_reported: boolean,
};

/**
 * A provider as the page sees it, without its key.
 */
export type ProviderView = {
  id: number,
  name: string,
  base_url: string,
  has_key: boolean,
  models: Array<ProviderModel>,
};

/**
 * The providers, the remote model picked (`None`: replies go to the local model), and where
 * keys are kept.
 */
export type ProvidersView = {
  providers: Array<ProviderView>,
  selected: RemoteChoice | null,
  /**
   * Where keys are kept, in words ("the Secret Service", a file readable only by you).
   */
  key_store: string,
};

/**
 * What a waiting request waits for (`Event::Queued`).
 */
export type QueueReason = "memory" | "row";

/**
 * How hard a reasoning model thinks, as its template takes it (`reasoning_effort`).
 */
export type ReasoningEffort = "low" | "medium" | "high";

/**
 * The remote model replies go to.
 */
export type RemoteChoice = {
  provider: number,
  model: string,
};

/**
 * Where a provider's model is writing the reply, for "Details".
 */
export type RemotePlan = {
  provider: string,
  /**
   * `scheme://host:port`.
   */
  server: string,
  model: string,
  /**
   * Media sent as content parts.
   */
  images: number,
  clips: number,
};

/**
 * Events of one reply, in order: `started`, `sources` (when documents were searched), `plan`, then a thinking model's `reasoning`* and
 * `thought`, `token`*, then `done` or `error`. A denoising model's reply sends `canvas`
 * events as each canvas forms, and one when it is finished (after its tokens). A reply that calls tools has rounds: after a
 * round's text, a `tool` event each time one of its calls is saved or changes (awaiting the
 * user's decision, running, done), then the next round's `plan`, `reasoning`, `token`s.
 */
export type ReplyEvent = {
  "kind": "started",
  user: MessageView,
  reply: Message,
} | {
  "kind": "sources",
  reply: MessageId,
  sources: Array<ReplySource>,
} | {
  "kind": "plan",
  plan: Plan,
} | {
  "kind": "remote",
  plan: RemotePlan,
} | {
  "kind": "reasoning",
  text: string,
} | {
  "kind": "thought",
  reasoning_ms: number,
} | {
  "kind": "token",
  text: string,
} | {
  "kind": "canvas",
  canvas: CanvasUpdate,
} | {
  "kind": "queued",
  reason: QueueReason,
  ahead: number,
} | {
  "kind": "tool",
  call: ToolCall,
} | {
  "kind": "done",
  reply: Message,
} | {
  "kind": "error",
  message: string,
  reply: Message | null,
};

export type ReplySource = {
  /**
   * 1, 2, ...: as the prompt and the reply cite it.
   */
  number: number,
  /**
   * The document's attachment.
   */
  attachment: AttachmentHash,
  /**
   * The name it was attached under.
   */
  document: string,
  /**
   * 1-based, for a format with pages.
   */
  page: number | null,
  text: string,
};

/**
 * How a reply was generated; stored with the reply by `finish_reply`.
 */
export type ReplyStats = {
  prompt_tokens: number,
  /**
   * Prompt tokens served from the prefix cache instead of being prefilled.
   */
  cached_tokens: number,
  generated_tokens: number,
  /**
   * `None` when no token came (e.g. an error during prefill).
   */
  time_to_first_token_ms: number | null,
  /**
   * Tokens per second after the first; for a denoising reply, its tokens over the time its
   * canvases took (they come a canvas at a time).
   */
  decode_tokens_per_second: number | null,
  model: string,
  /**
   * What speculative decoding did; `None` where the reply decoded plainly.
   */
  speculative: SpeculativeReplyStats | null,
  /**
   * A denoising model's reply: the steps each of its canvases took (empty for others).
   */
  steps_per_canvas?: Array<number>,
  /**
   * Why the model stopped; `None` where it did not say (a stopped or failed reply, one
   * written before this was kept, a provider that gave no reason).
   */
  stop_reason?: StopReason,
};

/**
 * A repository as Get models shows it.
 */
export type RepoDetails = {
  repo: string,
  /**
   * config.json's `model_type`, or the GGUF's `general.architecture`.
   */
  architecture: string | null,
  runs: boolean,
  gated: boolean,
  /**
   * The files one Download fetches for the whole model (a folder), with their total; empty
   * for a repository of GGUF files, each downloaded alone.
   */
  model_files: Array<string>,
  model_bytes: number,
  files: Array<RepoFileView>,
  /**
   * This machine's memory, for "fits".
   */
  memory_bytes: number,
};

export type RepoFileView = {
  name: string,
  size: number,
  /**
   * "Q4_K_M", "4-bit", ...
   */
  quantization: string | null,
  /**
   * A GGUF file, downloadable alone.
   */
  gguf: boolean,
  fits: boolean,
};

export type Role = "system" | "user" | "assistant";

export type RuntimeInfo = {
  /**
   * Confab's own version.
   */
  app_version: string,
  mlx: MlxRuntime,
  paths: AppPaths,
  default_model: DefaultModelStatus,
  /**
   * The app's current log file.
   */
  log_file: string,
};

/**
 * A named set of sampling settings the pane offers; Model's own (every field `None`, the
 * default) leaves them to the model, Balanced is the chat defaults.
 */
export type SamplingPreset = {
  name: string,
  hint: string,
  temperature: number | null,
  top_p: number | null,
  top_k: number | null,
  min_p: number | null,
  repetition_penalty: number | null,
};

/**
 * How a server is reached; environment variables and headers by name only.
 */
export type SavedTransport = {
  "kind": "stdio",
  command: string,
  args: Array<string>,
  env: Array<string>,
  cwd: string | null,
} | {
  "kind": "http",
  url: string,
  headers: Array<string>,
};

export type SearchHit = {
  conversation_id: ConversationId,
  conversation_title: string,
  message_id: MessageId,
  role: Role,
  /**
   * Unix milliseconds.
   */
  created_at: number,
  /**
   * An excerpt around the match, as plain-text pieces: render `highlight` ones marked. Kept
   * as data rather than HTML so a message's own markup can never be interpreted.
   */
  snippet: Array<SnippetPart>,
};

/**
 * An environment variable or header. `value`: `None` keeps the saved one.
 */
export type SecretInput = {
  name: string,
  value: string | null,
};

/**
 * A model the server holds.
 */
export type ServerModel = {
  name: string,
  path: string,
  /**
   * Requests using it now.
   */
  requests: number,
};

/**
 * For the header, the settings pane and the picker.
 */
export type ServerStatus = {
  /**
   * `http://127.0.0.1:PORT/v1` while it runs.
   */
  address: string | null,
  active_requests: number,
  error: string | null,
  /**
   * The models the server loaded for its requests, beside the chats' model.
   */
  loaded: Array<ServerModel>,
};

/**
 * Missing fields (older files) take their defaults.
 */
export type Settings = {
  system_prompt: string,
  /**
   * The sampling settings chosen over the model's own defaults (its generation_config.json,
   * or the chat defaults for a model without one); `None`: the model's.
   */
  temperature: number | null,
  top_p: number | null,
  top_k: number | null,
  min_p: number | null,
  repetition_penalty: number | null,
  max_tokens: number,
  /**
   * `None`: a new seed for each reply.
   */
  seed: number | null,
  /**
   * Extra folders searched for models.
   */
  model_folders: Array<string>,
  /**
   * Prefix (KV) cache budgets in MiB; they apply from the next launch.
   */
  kv_cache_memory_mb: number,
  kv_cache_disk_mb: number,
  /**
   * The share of the memory left beside the loaded models, in percent, that running replies
   * may come to hold together; a reply that would need more waits its turn, and one that
   * could never fit is refused with what to change. From the next launch.
   */
  reply_memory_percent: number,
  theme: Theme,
  /**
   * The model loaded at startup; `None`: the default model.
   */
  model_path: string | null,
  /**
   * The local OpenAI-compatible server (loopback only): off unless turned on.
   */
  server_enabled: boolean,
  server_port: number,
  /**
   * Clients must send `Authorization: Bearer <key>`; empty: no key asked. Travels to the
   * settings pane with the rest, but is saved in the secret store, never in SQLite.
   */
  server_key: string,
  /**
   * Web pages (origins such as `https://chat.example.com`; `*` matches any run) allowed to
   * call the server from a browser, besides pages on localhost; any other page is refused.
   */
  server_origins: Array<string>,
  /**
   * For models whose template reads `reasoning_effort` (gpt-oss); `None`: the template's own
   * default.
   */
  reasoning_effort: ReasoningEffort | null,
  /**
   * With tools on: whether the model decides to call one, or each local reply must call a
   * tool (held by the model's call grammar, as the server's `tool_choice: "required"`).
   */
  tool_use: ToolUse,
  /**
   * Rounds of tool calls one reply may make before it is stopped with a note.
   */
  tool_rounds: number,
  /**
   * How long a tool call may run before it is given up.
   */
  tool_timeout_s: number,
  /**
   * Per model (by its path), the bits its keys and values are quantized to (4 or 8, group
   * 64, as mlx-lm's `--kv-bits`); a model not listed keeps them in full precision.
   */
  model_kv_bits: Record<string, number>,
  /**
   * The embedding model that searches documents too large for the context (Settings › Model ›
   * Embedding model); `None`: the first one found in the model folders (`embedder::choose`).
   */
  embedding_model: string | null,
  /**
   * Speculative decoding for local replies: cheap proposals the model checks several at a
   * time (the same replies, sooner where proposals are kept; the plan says when a reply
   * cannot use it).
   */
  speculative: SpeculativeChoice,
  /**
   * Per model (by its path), the smaller model sharing its vocabulary that proposes its
   * tokens when `speculative` is `DraftModel`; loaded beside it.
   */
  model_drafts: Record<string, string>,
};

/**
 * What the pane offers besides the saved settings: the defaults ("Reset to defaults" puts
 * them back; nothing is saved until Save) and the sampling presets.
 */
export type SettingsChoices = {
  defaults: Settings,
  presets: Array<SamplingPreset>,
};

/**
 * A message among its siblings (same parent, oldest first): the UI's "< 2/3 >".
 */
export type Siblings = {
  ids: Array<MessageId>,
  /**
   * Where the message asked about is in `ids` (0-based).
   */
  index: number,
};

export type SnippetPart = {
  text: string,
  highlight: boolean,
};

/**
 * Where local replies take speculative proposals from.
 */
export type SpeculativeChoice = "off" | "prompt_lookup" | "draft_model";

/**
 * Speculative decoding's part in a reply, as the engine reported it (its `SpeculativeStats`).
 */
export type SpeculativeReplyStats = {
  /**
   * `prompt_lookup` or `draft_model`.
   */
  method: string,
  proposed: number,
  /**
   * Proposed tokens the model kept.
   */
  accepted: number,
  /**
   * `accepted / proposed`.
   */
  acceptance_rate: number,
  /**
   * Tokens each verifying pass gave (plain decoding gives 1 per pass).
   */
  tokens_per_step: number,
};

/**
 * Why a model stopped writing a reply that ended on its own. A reply cut by the token limit
 * (or a full context) is not finished: the window says so and offers Continue.
 */
export type StopReason = "end_of_turn" | "stop_string" | "token_limit" | "context_full";

export type Theme = "system" | "light" | "dark";

/**
 * One tool call of an assistant reply.
 */
export type ToolCall = {
  message_id: MessageId,
  /**
   * 0, 1, ... in the order the calls were added to the reply.
   */
  position: number,
  /**
   * Calls with the same round were asked for in one assistant turn.
   */
  round: number,
  call_id: string,
  /**
   * The MCP server offering the tool, if any.
   */
  server: string | null,
  tool: string,
  /**
   * JSON text, as the model wrote it.
   */
  arguments: string,
  /**
   * Byte length of the reply's content when the call was added: the call comes after
   * `content[..content_offset]`.
   */
  content_offset: number,
  /**
   * Byte length of the reply's reasoning (0 without any) when the call was added.
   */
  reasoning_offset: number,
  decision: ToolDecision,
  status: ToolCallStatus,
  /**
   * What the tool answered, once `Done`.
   */
  result: ToolResult | null,
  /**
   * Why it failed, for `Failed`.
   */
  error: string | null,
  /**
   * Unix milliseconds.
   */
  created_at: number,
  started_at: number | null,
  ended_at: number | null,
};

/**
 * Where a call is in its life.
 */
export type ToolCallStatus = "awaiting" | "running" | "done" | "failed" | "denied" | "cancelled" | "interrupted";

/**
 * What the user said about a call.
 */
export type ToolDecision = "pending" | "allowed_once" | "allowed_always" | "denied" | "auto";

/**
 * What the user decided on a call, as its card sends it.
 */
export type ToolDecisionInput = "once" | "always" | "deny";

/**
 * What a tool answered.
 */
export type ToolResult = {
  text: string,
  /**
   * Images the tool returned, added first with `add_attachment_*`.
   */
  images: Array<AttachmentHash>,
  /**
   * The tool itself reported the result as an error (MCP's `isError`).
   */
  is_error: boolean,
};

/**
 * A server as the settings pane sends it.
 */
export type ToolServerInput = {
  id: number | null,
  name: string,
  transport: TransportInput,
};

export type ToolServerState = "off" | "starting" | "ready" | "failed";

/**
 * A server as the page sees it: no secret values, with what the host says of it.
 */
export type ToolServerView = {
  id: number,
  name: string,
  enabled: boolean,
  transport: SavedTransport,
  state: ToolServerState,
  /**
   * Why it failed, for `failed`.
   */
  error: string | null,
  /**
   * The last lines it wrote to stderr (a stdio server), secret values masked.
   */
  stderr_tail: Array<string>,
  tools: Array<ToolView>,
};

export type ToolServersView = {
  servers: Array<ToolServerView>,
  /**
   * Where environment values and headers are kept, in words.
   */
  secret_store: string,
};

/**
 * Whether a reply with tools on may answer in text or must call a tool.
 */
export type ToolUse = "auto" | "required";

export type ToolView = {
  name: string,
  description: string | null,
  enabled: boolean,
  always_allowed: boolean,
};

export type TransportInput = {
  "kind": "stdio",
  command: string,
  args: Array<string>,
  env: Array<SecretInput>,
  cwd: string | null,
} | {
  "kind": "http",
  url: string,
  headers: Array<SecretInput>,
};

/** Every command the app answers: its arguments (camelCase) and its result. */
export interface Commands {
  runtime_info: { args: Record<string, never>; result: RuntimeInfo };
  diagnostics: { args: Record<string, never>; result: string };
  list_conversations: { args: { cursor: ConversationCursor | null; limit: number | null }; result: ConversationPage };
  rename_conversation: { args: { id: ConversationId; title: string }; result: string };
  set_system_prompt: { args: { id: ConversationId; prompt: string }; result: Conversation };
  set_thinking: { args: { id: ConversationId; on: boolean }; result: Conversation };
  delete_conversation: { args: { id: ConversationId }; result: void };
  conversation_messages: { args: { id: ConversationId }; result: MessageView[] };
  select_branch: { args: { message: MessageId }; result: MessageView[] };
  search_messages: { args: { query: string }; result: SearchHit[] };
  send_message: { args: { conversation: ConversationId | null; text: string; attachments: string[]; thinking: boolean | null; channel: Channel<ReplyEvent> }; result: void };
  regenerate: { args: { reply: MessageId; channel: Channel<ReplyEvent> }; result: void };
  continue_reply: { args: { reply: MessageId; channel: Channel<ReplyEvent> }; result: void };
  edit_message: { args: { message: MessageId; text: string; channel: Channel<ReplyEvent> }; result: void };
  stop_reply: { args: { conversation: ConversationId }; result: void };
  measure_context: { args: { conversation: ConversationId | null; draft: string; attachments: string[] }; result: ContextUse | null };
  attach_paths: { args: { paths: string[] }; result: Attachment[] };
  attach_bytes: { args: { name: string; bytes: number[] }; result: Attachment };
  attachment_bytes: { args: { hash: string }; result: ArrayBuffer | number[] };
  attachment_thumbnail: { args: { hash: string }; result: ArrayBuffer | number[] };
  document_info: { args: { hash: string }; result: DocumentInfo };
  list_models: { args: Record<string, never>; result: ModelSummary[] };
  model_state: { args: Record<string, never>; result: ModelState };
  load_model: { args: { path: string }; result: ModelInfo };
  unload_model: { args: Record<string, never>; result: void };
  draft_candidates: { args: { model: string }; result: ModelSummary[] };
  open_link: { args: { url: string }; result: void };
  show_in_folder: { args: { path: string }; result: void };
  list_folder: { args: { path: string | null }; result: FolderListing };
  get_settings: { args: Record<string, never>; result: Settings };
  settings_choices: { args: Record<string, never>; result: SettingsChoices };
  save_settings: { args: { settings: Settings }; result: Settings };
  server_status: { args: Record<string, never>; result: ServerStatus };
  list_providers: { args: Record<string, never>; result: ProvidersView };
  save_provider: { args: { provider: ProviderInput }; result: ProvidersView };
  remove_provider: { args: { id: number }; result: ProvidersView };
  refresh_provider_models: { args: { id: number }; result: ProvidersView };
  mark_remote_model_inputs: { args: { provider: number; model: string; vision: boolean; audio: boolean }; result: ProvidersView };
  select_remote_model: { args: { choice: RemoteChoice | null }; result: ProvidersView };
  list_tool_servers: { args: Record<string, never>; result: ToolServersView };
  save_tool_server: { args: { server: ToolServerInput }; result: ToolServersView };
  remove_tool_server: { args: { id: number }; result: ToolServersView };
  import_tool_servers: { args: { json: string }; result: ToolServersView };
  set_tool_server_enabled: { args: { id: number; enabled: boolean }; result: ToolServersView };
  restart_tool_server: { args: { id: number }; result: ToolServersView };
  set_tool_enabled: { args: { id: number; tool: string; enabled: boolean }; result: ToolServersView };
  set_tool_always_allowed: { args: { id: number; tool: string; always: boolean }; result: ToolServersView };
  decide_tool_call: { args: { reply: MessageId; position: number; decision: ToolDecisionInput }; result: void };
  hub_settings: { args: Record<string, never>; result: HubSettings };
  save_hub_settings: { args: { endpoint: string; token: string | null }; result: HubSettings };
  search_hub: { args: { query: string }; result: HubModel[] };
  repo_details: { args: { repo: string }; result: RepoDetails };
  list_downloads: { args: Record<string, never>; result: Download[] };
  start_download: { args: { repo: string; files: string[] }; result: Download };
  pause_download: { args: { id: string }; result: void };
  resume_download: { args: { id: string }; result: Download };
  cancel_download: { args: { id: string }; result: void };
}

export type CommandName = keyof Commands;
