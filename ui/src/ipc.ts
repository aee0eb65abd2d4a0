// Every call into the Rust side goes through this file. The types and the commands' signatures
// are generated from the Rust side into ipc.generated.ts (see src-tauri/src/ipc.rs); each call
// below is checked against them.
import { Channel, invoke } from '@tauri-apps/api/core';
import { listen, type UnlistenFn } from '@tauri-apps/api/event';
import type {
  Attachment,
  CommandName,
  Commands,
  Conversation,
  ConversationCursor,
  ConversationId,
  ConversationPage,
  ContextUse,
  DocumentInfo,
  Download,
  FolderListing,
  HubModel,
  HubSettings,
  IndexProgress,
  ModelInfo,
  MessageId,
  MessageView,
  ModelState,
  ModelSummary,
  Plan,
  ProviderInput,
  ProvidersView,
  RemoteChoice,
  RemotePlan,
  RepoDetails,
  ReplyEvent,
  RuntimeInfo,
  SearchHit,
  ServerStatus,
  Settings,
  SettingsChoices,
  ToolDecisionInput,
  ToolServerInput,
  ToolServersView,
} from './ipc.generated';

export type * from './ipc.generated';

// ---------------------------------------------------------------------------------------------
// Runtime

/** Which MLX the app runs on, where it keeps its files, and whether the default model is there. */
export function runtimeInfo(): Promise<RuntimeInfo> {
  return call('runtime_info');
}

/** Versions, the loaded model and the log's last lines, as text for a bug report. */
export function diagnostics(): Promise<string> {
  return call('diagnostics');
}

// ---------------------------------------------------------------------------------------------
// Conversations and messages (crates/store)

/** Newest first; pass `next` back for the following page. */
export function listConversations(cursor: ConversationCursor | null = null, limit = 200): Promise<ConversationPage> {
  return call('list_conversations', { cursor, limit });
}

/** Resolves to the title as stored (the backend trims and limits it). */
export function renameConversation(id: ConversationId, title: string): Promise<string> {
  return call('rename_conversation', { id, title });
}

/** The chat's own system prompt ('' goes back to the one in Settings); resolves to the chat as stored. */
export function setSystemPrompt(id: ConversationId, prompt: string): Promise<Conversation> {
  return call('set_system_prompt', { id, prompt });
}

/** Turns the chat's thinking on or off (models whose template has the switch); resolves to the chat as stored. */
export function setThinking(id: ConversationId, on: boolean): Promise<Conversation> {
  return call('set_thinking', { id, on });
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

/** What a reply's "Details" show: the local engine's plan, or where a provider wrote it. */
export type AnyPlan = Plan | RemotePlan;

export type ReplyHandler = (event: ReplyEvent) => void;

function replyChannel(onEvent: ReplyHandler): Channel<ReplyEvent> {
  const channel = new Channel<ReplyEvent>();
  channel.onmessage = onEvent;
  return channel;
}

/**
 * Sends a user message (with attachments already added by `attachPaths`/`attachBytes`) and
 * streams the reply. `thinking`: a new chat's thinking switch (null: on; an existing chat keeps its own). Resolves when the reply ends; rejects only when nothing could be saved.
 */
export function sendMessage(
  conversation: ConversationId | null,
  text: string,
  attachments: string[],
  thinking: boolean | null,
  onEvent: ReplyHandler,
): Promise<void> {
  return call('send_message', { conversation, text, attachments, thinking, channel: replyChannel(onEvent) });
}

/** A new reply to the same user message, kept beside the old one. */
export function regenerate(reply: MessageId, onEvent: ReplyHandler): Promise<void> {
  return call('regenerate', { reply, channel: replyChannel(onEvent) });
}

/** More of a stopped or interrupted reply, streamed into the same message. */
export function continueReply(reply: MessageId, onEvent: ReplyHandler): Promise<void> {
  return call('continue_reply', { reply, channel: replyChannel(onEvent) });
}

/** An edited copy of a user message (a new branch; the original stays), then its reply. */
export function editMessage(message: MessageId, text: string, onEvent: ReplyHandler): Promise<void> {
  return call('edit_message', { message, text, channel: replyChannel(onEvent) });
}

/** Stops the conversation's reply within one token; the text so far is kept as `stopped`. */
export function stopReply(conversation: ConversationId): Promise<void> {
  return call('stop_reply', { conversation });
}

/**
 * How full the loaded model's context would be with `draft` sent next in `conversation` (null:
 * a new chat). Null when no local model would take it (none loaded, or a provider's is picked).
 */
export function measureContext(conversation: ConversationId | null, draft: string, attachments: string[] = []): Promise<ContextUse | null> {
  return call('measure_context', { conversation, draft, attachments });
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
export function attachBytes(name: string, bytes: Uint8Array): Promise<Attachment> {
  return call('attach_bytes', { name, bytes: Array.from(bytes) });
}

/** The attachment's bytes, for a thumbnail or playback (make a blob URL). */
export async function attachmentBytes(hash: string): Promise<Uint8Array> {
  return bytesOf(await call('attachment_bytes', { hash }));
}

/** A video attachment's first frame, as PNG bytes. */
export async function attachmentThumbnail(hash: string): Promise<Uint8Array> {
  return bytesOf(await call('attachment_thumbnail', { hash }));
}

/** A document attachment's format, pages and how it was read (for its chip). */
export function documentInfo(hash: string): Promise<DocumentInfo> {
  return call('document_info', { hash });
}

/** How far the index of a document too large for the context has come (passages embedded). */
export function onDocumentIndex(handler: (progress: IndexProgress) => void): Promise<UnlistenFn> {
  return listen<IndexProgress>('document-index', (event) => handler(event.payload));
}

/** Raw IPC responses arrive as an ArrayBuffer in the app, as numbers through the mock. */
function bytesOf(data: ArrayBuffer | number[]): Uint8Array {
  return data instanceof ArrayBuffer ? new Uint8Array(data) : Uint8Array.from(data);
}

// ---------------------------------------------------------------------------------------------
// Models

/** Models in the app's folder, the Hugging Face cache, LM Studio's folders, Ollama's store and added folders. */
export function listModels(): Promise<ModelSummary[]> {
  return call('list_models');
}

export function modelState(): Promise<ModelState> {
  return call('model_state');
}

/** Loads a model (replacing the current one); progress arrives as `model-state` events. */
export function loadModel(path: string): Promise<ModelInfo> {
  return call('load_model', { path });
}

/** Models that could draft for the model at `model`: chat models sharing its vocabulary (Settings › Model). */
export function draftCandidates(model: string): Promise<ModelSummary[]> {
  return call('draft_candidates', { model });
}

/** Unloads the local model to free its memory; the `model-state` event follows. */
export function unloadModel(): Promise<void> {
  return call('unload_model');
}

/** Opens the model's folder (or the folder holding its file) in the file manager. */
export function showInFolder(path: string): Promise<void> {
  return call('show_in_folder', { path });
}

/** One folder for the model-folder picker; without a path, the home folder. */
export function listFolder(path: string | null = null): Promise<FolderListing> {
  return call('list_folder', { path });
}

export function onModelState(handler: (state: ModelState) => void): Promise<UnlistenFn> {
  return listen<ModelState>('model-state', (event) => handler(event.payload));
}

// ---------------------------------------------------------------------------------------------
// Links

/** Opens a web or mail link in the system browser; other addresses are refused with a message. */
export function openLink(url: string): Promise<void> {
  return call('open_link', { url });
}

// ---------------------------------------------------------------------------------------------
// Settings

export function getSettings(): Promise<Settings> {
  return call('get_settings');
}

/** The defaults ("Reset to defaults") and the sampling presets. */
export function settingsChoices(): Promise<SettingsChoices> {
  return call('settings_choices');
}

/** Validates and saves; rejects with a message naming the bad field. Returns what was saved. */
export function saveSettings(settings: Settings): Promise<Settings> {
  return call('save_settings', { settings });
}

// ---------------------------------------------------------------------------------------------
// Local server

export function serverStatus(): Promise<ServerStatus> {
  return call('server_status');
}

// ---------------------------------------------------------------------------------------------
// Remote providers: OpenAI-compatible servers on other machines. Keys never come back to the
// page: only whether one is set.

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
// Tools: MCP servers (Settings › Tools) and the user's decisions on a reply's tool calls.
// Environment values and headers never come back to the page: only their names.

export function listToolServers(): Promise<ToolServersView> {
  return call('list_tool_servers');
}

/** Adds (`id` null) or edits a server; a server that is on restarts with the change. */
export function saveToolServer(server: ToolServerInput): Promise<ToolServersView> {
  return call('save_tool_server', { server });
}

export function removeToolServer(id: number): Promise<ToolServersView> {
  return call('remove_tool_server', { id });
}

/** Adds the servers of a pasted `mcpServers` JSON, switched off. */
export function importToolServers(json: string): Promise<ToolServersView> {
  return call('import_tool_servers', { json });
}

/** On: the server starts and its tools are offered to chats. Off: it stops. */
export function setToolServerEnabled(id: number, enabled: boolean): Promise<ToolServersView> {
  return call('set_tool_server_enabled', { id, enabled });
}

export function restartToolServer(id: number): Promise<ToolServersView> {
  return call('restart_tool_server', { id });
}

/** One tool of a server, offered to chats or not. */
export function setToolEnabled(id: number, tool: string, enabled: boolean): Promise<ToolServersView> {
  return call('set_tool_enabled', { id, tool, enabled });
}

/** Calls of this tool run without asking (`true`), or ask each time again (`false`). */
export function setToolAlwaysAllowed(id: number, tool: string, always: boolean): Promise<ToolServersView> {
  return call('set_tool_always_allowed', { id, tool, always });
}

/** The user's answer to a call waiting in reply `reply` (its card's buttons). */
export function decideToolCall(reply: MessageId, position: number, decision: ToolDecisionInput): Promise<void> {
  return call('decide_tool_call', { reply, position, decision });
}

/** The servers' view whenever one starts, becomes ready, fails or stops. */
export function onToolServers(handler: (view: ToolServersView) => void): Promise<UnlistenFn> {
  return listen<ToolServersView>('tool-servers', (event) => handler(event.payload));
}

// ---------------------------------------------------------------------------------------------
// Get models: the hub and downloads

/** The hub's endpoint, and whether a token is set (the token itself never comes back). */
export function hubSettings(): Promise<HubSettings> {
  return call('hub_settings');
}

/** `token`: null keeps the one set, '' removes it. */
export function saveHubSettings(endpoint: string, token: string | null): Promise<HubSettings> {
  return call('save_hub_settings', { endpoint, token });
}

/** Repositories on the hub in a format the engine reads, the ones it runs first. */
export function searchHub(query: string): Promise<HubModel[]> {
  return call('search_hub', { query });
}

export function repoDetails(repo: string): Promise<RepoDetails> {
  return call('repo_details', { repo });
}

export function listDownloads(): Promise<Download[]> {
  return call('list_downloads');
}

/** Downloads a repository's model files, or only `files` (one GGUF). */
export function startDownload(repo: string, files: string[] = []): Promise<Download> {
  return call('start_download', { repo, files });
}

export function pauseDownload(id: string): Promise<void> {
  return call('pause_download', { id });
}

export function resumeDownload(id: string): Promise<Download> {
  return call('resume_download', { id });
}

export function cancelDownload(id: string): Promise<void> {
  return call('cancel_download', { id });
}

/** Every change of a download: progress, paused, done, failed. */
export function onDownload(handler: (download: Download) => void): Promise<UnlistenFn> {
  return listen<Download>('download', (event) => handler(event.payload));
}

// ---------------------------------------------------------------------------------------------

/** A command's arguments: none, or the object its Rust signature asks for. */
type Args<C extends CommandName> = Commands[C]['args'] extends Record<string, never> ? [] : [Commands[C]['args']];

/** Commands fail with a string message; anything else (no Tauri, a bug) becomes one too. */
async function call<C extends CommandName>(command: C, ...args: Args<C>): Promise<Commands[C]['result']> {
  try {
    return await invoke<Commands[C]['result']>(command, args[0]);
  } catch (e) {
    throw new Error(errorMessage(e));
  }
}

export function errorMessage(e: unknown): string {
  if (typeof e === 'string') return e;
  if (e instanceof Error) return e.message;
  return String(e);
}
