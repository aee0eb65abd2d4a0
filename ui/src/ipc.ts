// Every call into the Rust side goes through this file. The types mirror src-tauri/src/*.rs
// (serde's JSON shapes, snake_case fields); command arguments are camelCase, as Tauri expects.
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';

// ---------------------------------------------------------------------------------------------
// Runtime

/** Mirrors `RuntimeInfo` in src-tauri/src/commands/runtime.rs. */
export interface RuntimeInfo {
  mlx: {
    version: string;
    built_against: string;
    backend: string;
    device: string;
    library: string | null;
    metallib: string | null;
  };
  paths: {
    data_dir: string;
    models_dir: string;
    cache_dir: string;
  };
  default_model: {
    name: string;
    path: string;
    present: boolean;
  };
  /** The app's current log file. */
  log_file: string;
}

/** Which MLX the app runs on, where it keeps its files, and whether the default model is there. */
export function runtimeInfo(): Promise<RuntimeInfo> {
  return call<RuntimeInfo>('runtime_info');
}

/** Versions, the loaded model and the log's last lines, as text for a bug report. */
export function diagnostics(): Promise<string> {
  return call<string>('diagnostics');
}

// ---------------------------------------------------------------------------------------------
// Conversations and messages (crates/store)

export type ConversationId = number;
export type MessageId = number;

export interface Conversation {
  id: ConversationId;
  title: string;
  /** Unix milliseconds. */
  created_at: number;
  updated_at: number;
  model: string | null;
  system_prompt: string | null;
  current_leaf: MessageId | null;
}

export interface ConversationCursor {
  updated_at: number;
  id: ConversationId;
}

export interface ConversationPage {
  conversations: Conversation[];
  next: ConversationCursor | null;
}

export type Role = 'system' | 'user' | 'assistant';
/** Only replies are ever anything but `complete`. `interrupted`: the app quit mid-reply. */
export type MessageStatus = 'streaming' | 'complete' | 'stopped' | 'error' | 'interrupted';

export interface ReplyStats {
  prompt_tokens: number;
  cached_tokens: number;
  generated_tokens: number;
  time_to_first_token_ms: number | null;
  decode_tokens_per_second: number | null;
  model: string;
}

export interface Attachment {
  /** SHA-256 of the bytes, hex. */
  hash: string;
  mime: string;
  size: number;
  original_name: string | null;
  width: number | null;
  height: number | null;
  duration_ms: number | null;
  created_at: number;
}

export interface Message {
  id: MessageId;
  conversation_id: ConversationId;
  parent_id: MessageId | null;
  role: Role;
  content: string;
  status: MessageStatus;
  error: string | null;
  created_at: number;
  stats: ReplyStats | null;
}

/** A message on the current branch, with what the UI shows around it. */
export interface MessageView {
  message: Message;
  attachments: Attachment[];
  /** The message among its siblings (edits, regenerations): the "< 2/3 >" switcher. */
  siblings: { ids: MessageId[]; index: number };
}

export interface SnippetPart {
  text: string;
  highlight: boolean;
}

export interface SearchHit {
  conversation_id: ConversationId;
  conversation_title: string;
  message_id: MessageId;
  role: Role;
  created_at: number;
  snippet: SnippetPart[];
}

/** Newest first; pass `next` back for the following page. */
export function listConversations(cursor: ConversationCursor | null = null, limit = 200): Promise<ConversationPage> {
  return call('list_conversations', { cursor, limit });
}

export function createConversation(): Promise<Conversation> {
  return call('create_conversation');
}

/** Resolves to the title as stored (the backend trims and limits it). */
export function renameConversation(id: ConversationId, title: string): Promise<string> {
  return call('rename_conversation', { id, title });
}

export function deleteConversation(id: ConversationId): Promise<void> {
  return call('delete_conversation', { id });
}

/** The conversation's current branch, root first. */
export function conversationMessages(id: ConversationId): Promise<MessageView[]> {
  return call('conversation_messages', { id });
}

/** Shows the branch through `message` (a sibling picked in the switcher); returns the new branch. */
export function selectBranch(message: MessageId): Promise<MessageView[]> {
  return call('select_branch', { message });
}

export function searchMessages(query: string): Promise<SearchHit[]> {
  return call('search_messages', { query });
}

// ---------------------------------------------------------------------------------------------
// Generation: send, regenerate, edit stream a reply through a Channel.

/** Mirrors the engine's plan: what the reply reuses, decided before any work. */
export interface Plan {
  prompt_tokens: number;
  reused_tokens: number;
  reuse_source: 'memory' | 'disk' | 'none';
  reuse_declined: string | null;
  /** Set when layers that cannot be cut back resumed from a checkpoint before the shared prefix. */
  resumed_from_checkpoint?: { position: number; shared: number } | null;
  /** Checkpoints the prefill took (0 for models whose state can be cut back). */
  checkpoints?: number;
  chunk_size: number;
  chunks: number;
  /** Each image and clip in the prompt, and where its tower output came from. */
  media: MediaPlan[];
  /** Vision/audio tower runs this reply needed (0 when every item was cached). */
  tower_runs: number;
}

export interface MediaPlan {
  kind: 'image' | 'audio';
  file: string;
  /** The content hash's first 12 hex digits. */
  hash: string;
  position: number;
  soft_tokens: number;
  /** `prefix`: already in the reused cache; `memory`/`disk`: the encoder cache; `miss`: the tower ran. */
  encoder: 'prefix' | 'memory' | 'disk' | 'miss';
}

/** Mirrors `RemotePlan` in src-tauri/src/remote_reply.rs: a reply a provider's model writes. */
export interface RemotePlan {
  provider: string;
  /** `scheme://host:port`: the machine the conversation went to. */
  server: string;
  model: string;
  /** Media sent as content parts. */
  images: number;
  clips: number;
}

/** What a reply's "Details" show: the local engine's plan, or where a provider wrote it. */
export type AnyPlan = Plan | RemotePlan;

/** Events of one reply, in order: `started`, `plan` (or `remote`), `token`*, then `done` or `error`. */
export type ReplyEvent =
  /** The user's message (new, or the edited copy) and the empty reply now streaming. */
  | { kind: 'started'; user: MessageView; reply: Message }
  | { kind: 'plan'; plan: Plan }
  /** Instead of `plan` when a remote provider writes the reply. */
  | { kind: 'remote'; plan: RemotePlan }
  | { kind: 'token'; text: string }
  /** The reply as stored: complete or stopped, with its stats. */
  | { kind: 'done'; reply: Message }
  /** The reply (kept, with its text so far: `error`, or `interrupted` when a provider's stream was cut) and why. */
  | { kind: 'error'; message: string; reply: Message | null };

export type ReplyHandler = (event: ReplyEvent) => void;

function replyChannel(onEvent: ReplyHandler): Channel<ReplyEvent> {
  const channel = new Channel<ReplyEvent>();
  channel.onmessage = onEvent;
  return channel;
}

/**
 * Sends a user message (with attachments already added by `attachPaths`/`attachBytes`) and
 * streams the reply. Resolves when the reply ends; rejects only when nothing could be saved.
 */
export function sendMessage(
  conversation: ConversationId,
  text: string,
  attachments: string[],
  onEvent: ReplyHandler,
): Promise<void> {
  return call('send_message', { conversation, text, attachments, channel: replyChannel(onEvent) });
}

/** A new reply to the same user message, kept beside the old one. */
export function regenerate(reply: MessageId, onEvent: ReplyHandler): Promise<void> {
  return call('regenerate', { reply, channel: replyChannel(onEvent) });
}

/** An edited copy of a user message (a new branch; the original stays), then its reply. */
export function editMessage(message: MessageId, text: string, onEvent: ReplyHandler): Promise<void> {
  return call('edit_message', { message, text, channel: replyChannel(onEvent) });
}

/** Stops the conversation's reply within one token; the text so far is kept as `stopped`. */
export function stopReply(conversation: ConversationId): Promise<void> {
  return call('stop_reply', { conversation });
}

/** The backend tells the UI when a conversation changed on its own (the background title). */
export function onConversationUpdated(handler: (conversation: Conversation) => void): Promise<UnlistenFn> {
  return listen<Conversation>('conversation-updated', (event) => handler(event.payload));
}

// ---------------------------------------------------------------------------------------------
// Attachments. Dropped files arrive as paths (the backend only reads paths it saw dropped);
// picked and pasted files as bytes.

/** Files dropped on the window (paths from Tauri's drag-drop event). */
export function attachPaths(paths: string[]): Promise<Attachment[]> {
  return call('attach_paths', { paths });
}

/** A picked or pasted file. */
export function attachBytes(name: string, mime: string, bytes: Uint8Array): Promise<Attachment> {
  return call('attach_bytes', { name, mime, bytes: Array.from(bytes) });
}

/** The attachment's bytes, for a thumbnail or playback (make a blob URL). */
export async function attachmentBytes(hash: string): Promise<Uint8Array> {
  const data = await call<number[] | ArrayBuffer>('attachment_bytes', { hash });
  return data instanceof ArrayBuffer ? new Uint8Array(data) : Uint8Array.from(data);
}

// ---------------------------------------------------------------------------------------------
// Models

export interface ModelSummary {
  name: string;
  path: string;
  format: string;
  architecture: string;
  /** False when the engine has no implementation for the architecture. */
  supported: boolean;
  quantization: string;
  size_bytes: number;
  context_length: number | null;
  vision: boolean;
  audio: boolean;
}

export interface LoadedModel {
  name: string;
  path: string;
  architecture: string;
  format: string;
  dtype: string;
  quantized: boolean;
  context_length: number;
  parameters: number;
  vision: boolean;
  audio: boolean;
}

/** The model now loaded (or loading), as the window shows it. */
export interface ModelState {
  loaded: LoadedModel | null;
  /** The path being loaded, with progress 0..1. */
  loading: { path: string; stage: string; fraction: number } | null;
  /** Why the last load failed. */
  error: string | null;
}

/** Models in the app's folder, the Hugging Face cache, LM Studio's folder and added folders. */
export function listModels(): Promise<ModelSummary[]> {
  return call('list_models');
}

export function modelState(): Promise<ModelState> {
  return call('model_state');
}

/** Loads a model (replacing the current one); progress arrives as `model-state` events. */
export function loadModel(path: string): Promise<LoadedModel> {
  return call('load_model', { path });
}

export function onModelState(handler: (state: ModelState) => void): Promise<UnlistenFn> {
  return listen<ModelState>('model-state', (event) => handler(event.payload));
}

// ---------------------------------------------------------------------------------------------
// Settings

export type Theme = 'system' | 'light' | 'dark';

export interface Settings {
  system_prompt: string;
  temperature: number;
  top_p: number;
  top_k: number;
  min_p: number;
  repetition_penalty: number;
  max_tokens: number;
  /** null: a new seed each reply. */
  seed: number | null;
  /** Extra folders searched for models. */
  model_folders: string[];
  /** Prefix (KV) cache budgets, MiB. */
  kv_cache_memory_mb: number;
  kv_cache_disk_mb: number;
  theme: Theme;
  /** The model loaded at startup; null: the default model. */
  model_path: string | null;
  /** The local OpenAI-compatible server (this computer only); off by default. */
  server_enabled: boolean;
  server_port: number;
  /** Clients send it as `Authorization: Bearer <key>`; empty: no key asked. */
  server_key: string;
}

export function getSettings(): Promise<Settings> {
  return call('get_settings');
}

/** Validates and saves; rejects with a message naming the bad field. Returns what was saved. */
export function saveSettings(settings: Settings): Promise<Settings> {
  return call('save_settings', { settings });
}

// ---------------------------------------------------------------------------------------------
// Local server

/** Mirrors `ServerStatus` in src-tauri/src/local_server.rs. */
export interface ServerStatus {
  /** `http://127.0.0.1:PORT/v1` while it runs; null when off. */
  address: string | null;
  active_requests: number;
  /** Why it could not start (a port in use). */
  error: string | null;
}

export function serverStatus(): Promise<ServerStatus> {
  return call('server_status');
}

// ---------------------------------------------------------------------------------------------
// Remote providers: OpenAI-compatible servers on other machines. Keys never come back to the
// page: only whether one is set.

/** Mirrors `ProviderModel` in src-tauri/src/providers.rs. */
export interface ProviderModel {
  id: string;
  context_length: number | null;
  vision: boolean;
  audio: boolean;
  /** True when the endpoint itself listed the model's inputs; false: `vision`/`audio` are the user's marks. */
  inputs_reported: boolean;
}

export interface ProviderView {
  id: number;
  name: string;
  base_url: string;
  has_key: boolean;
  models: ProviderModel[];
}

/** The remote model replies go to. */
export interface RemoteChoice {
  provider: number;
  model: string;
}

export interface ProvidersView {
  providers: ProviderView[];
  /** null: replies go to the local model. */
  selected: RemoteChoice | null;
  /** Where keys are kept, in words. */
  key_store: string;
}

/** A provider to add (`id` null) or edit. `api_key`: null keeps the saved one, '' removes it. */
export interface ProviderInput {
  id: number | null;
  name: string;
  base_url: string;
  api_key: string | null;
}

export function listProviders(): Promise<ProvidersView> {
  return call('list_providers');
}

export function saveProvider(provider: ProviderInput): Promise<ProvidersView> {
  return call('save_provider', { provider });
}

export function removeProvider(id: number): Promise<ProvidersView> {
  return call('remove_provider', { id });
}

/** Asks the provider for its models (`GET /v1/models`). */
export function refreshProviderModels(id: number): Promise<ProvidersView> {
  return call('refresh_provider_models', { id });
}

/** Marks what a model takes, for endpoints that do not say. */
export function markRemoteModelInputs(provider: number, model: string, vision: boolean, audio: boolean): Promise<ProvidersView> {
  return call('mark_remote_model_inputs', { provider, model, vision, audio });
}

/** Replies go to this provider's model from now on; null: back to the local model. */
export function selectRemoteModel(choice: RemoteChoice | null): Promise<ProvidersView> {
  return call('select_remote_model', { choice });
}

// ---------------------------------------------------------------------------------------------

/** Commands fail with a string message; anything else (no Tauri, a bug) becomes one too. */
async function call<T>(command: string, args?: Record<string, unknown>): Promise<T> {
  try {
    return await invoke<T>(command, args);
  } catch (e) {
    throw new Error(errorMessage(e));
  }
}

export function errorMessage(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  return String(e);
}
