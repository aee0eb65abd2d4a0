// Backend-shaped values for tests, and a fake backend that answers the startup commands.
import type {
  Attachment,
  ContextUse,
  Conversation,
  ModelInfo,
  Message,
  MessageView,
  ModelSummary,
  Settings,
  SettingsChoices,
  ToolCall,
  ToolResult,
} from '../ipc';
import { commands } from './tauriMock';

export function conversation(id: number, title = `Chat ${id}`): Conversation {
  return {
    id,
    title,
    created_at: 1_700_000_000_000 + id,
    updated_at: 1_700_000_000_000 + id,
    model: null,
    system_prompt: null,
    current_leaf: null,
    thinking: true,
  };
}

export function message(id: number, role: Message['role'], content: string, extra: Partial<Message> = {}): Message {
  return {
    id,
    conversation_id: 1,
    parent_id: id > 1 ? id - 1 : null,
    role,
    content,
    status: 'complete',
    error: null,
    created_at: 1_700_000_000_000 + id,
    stats: null,
    reasoning: null,
    reasoning_ms: null,
    tool_calls: [],
    ...extra,
  };
}

/** A tool call of reply `message_id`, waiting for the user's answer unless `extra` says else. */
/** A tool's answer, as a finished call holds it. */
export function answered(text: string, images: string[] = []): ToolResult {
  return { text, images, is_error: false };
}

export function toolCall(message_id: number, position: number, extra: Partial<ToolCall> = {}): ToolCall {
  return {
    message_id,
    position,
    round: 0,
    call_id: `call_${position}`,
    server: 'files',
    tool: 'read_file',
    arguments: '{"path":"/tmp/notes.txt"}',
    content_offset: 0,
    reasoning_offset: 0,
    decision: 'pending',
    status: 'awaiting',
    result: null,
    error: null,
    created_at: 0,
    started_at: null,
    ended_at: null,
    ...extra,
  };
}

export function view(msg: Message, siblings: number[] = [msg.id], attachments: Attachment[] = []): MessageView {
  return { message: msg, attachments, siblings: { ids: siblings, index: siblings.indexOf(msg.id) } };
}

export const smolLoaded: ModelInfo = {
  name: 'SmolLM2',
  path: '/models/smol.gguf',
  architecture: 'llama',
  format: 'Gguf',
  dtype: 'q8_0',
  quantized: true,
  context_length: 8192,
  vocab_size: 49_152,
  fingerprint: 'smol',
  parameters: 135_000_000,
  weights_bytes: 145_000_000,
  kv_quantization: null,
  kv_quantization_declined: null,
  vision: false,
  audio: false,
  video: false,
  thinking_switch: false,
  reasoning_effort: false,
  embedding: null,
  denoising: null,
};

export const gemmaLoaded: ModelInfo = {
  ...smolLoaded,
  name: 'Gemma 4',
  path: '/models/gemma4',
  architecture: 'gemma4',
  format: 'Safetensors',
  context_length: 131072,
  vision: true,
  audio: true,
  video: false,
};

export const qwenVlLoaded: ModelInfo = {
  ...smolLoaded,
  name: 'Qwen3-VL',
  path: '/models/qwen3-vl',
  architecture: 'qwen3_vl',
  format: 'Safetensors',
  vision: true,
  video: true,
};

export const videoAttachment: Attachment = {
  hash: 'vid456',
  mime: 'video/mp4',
  size: 4096,
  original_name: 'clip.mp4',
  width: 96,
  height: 64,
  duration_ms: 65_400,
  created_at: 1,
};

export const models: ModelSummary[] = [
  {
    name: 'SmolLM2',
    path: '/models/smol.gguf',
    source: 'Folder',
    format: 'Gguf',
    architecture: 'llama',
    supported: true,
    unsupported_reason: null,
    quantization: 'Q8_0',
    size_bytes: 145_000_000,
    context_length: 8192,
    vision: false,
    audio: false,
    video: false,
    parameters: 134_515_008,
    weights_bytes: 250_000_000,
    memory_needed_bytes: 250_000_000,
    machine_memory_bytes: 24 * 2 ** 30,
    fits: true,
    embedding: false,
    denoising: false,
  },
  {
    name: 'Gemma 4',
    path: '/models/gemma4',
    source: 'Folder',
    format: 'Safetensors',
    architecture: 'gemma4',
    supported: true,
    unsupported_reason: null,
    quantization: '4-bit',
    size_bytes: 3_200_000_000,
    context_length: 131072,
    vision: true,
    audio: true,
    video: false,
    parameters: 4_300_000_000,
    weights_bytes: 30 * 2 ** 30,
    memory_needed_bytes: 30 * 2 ** 30,
    machine_memory_bytes: 24 * 2 ** 30,
    fits: false,
    embedding: false,
    denoising: false,
  },
  {
    name: 'Mamba',
    path: '/models/mamba',
    source: 'Folder',
    format: 'Safetensors',
    architecture: 'mamba',
    supported: false,
    unsupported_reason: "The mamba architecture isn't supported yet",
    quantization: 'bf16',
    size_bytes: 1_000_000,
    context_length: null,
    vision: false,
    audio: false,
    video: false,
    parameters: null,
    weights_bytes: 1_000_000,
    memory_needed_bytes: 1_000_000,
    machine_memory_bytes: 24 * 2 ** 30,
    fits: true,
    embedding: false,
    denoising: false,
  },
];

export const settings: Settings = {
  system_prompt: 'Be brief.',
  temperature: 0.7,
  top_p: 0.9,
  top_k: 40,
  min_p: 0.05,
  repetition_penalty: 1.1,
  max_tokens: 1024,
  seed: null,
  model_folders: ['/extra/models'],
  kv_cache_memory_mb: 512,
  kv_cache_disk_mb: 2048,
  reply_memory_percent: 50,
  theme: 'light',
  model_path: null,
  server_enabled: false,
  server_port: 8080,
  server_key: '',
  server_origins: [],
  reasoning_effort: null,
  tool_use: 'auto',
  tool_rounds: 8,
  tool_timeout_s: 60,
  model_kv_bits: {},
  embedding_model: null,
  speculative: 'off',
  model_drafts: {},
};

/** What settings_choices answers: the backend's defaults and its presets. */
export const settingsChoices: SettingsChoices = {
  defaults: {
    ...settings,
    system_prompt: '',
    temperature: null,
    top_p: null,
    top_k: null,
    min_p: null,
    repetition_penalty: null,
    max_tokens: 2048,
    model_folders: [],
    theme: 'system',
    kv_cache_memory_mb: 2048,
    kv_cache_disk_mb: 8192,
  },
  presets: [
    { name: "Model's own", hint: 'The defaults.', temperature: null, top_p: null, top_k: null, min_p: null, repetition_penalty: null },
    { name: 'Precise', hint: 'Facts.', temperature: 0.1, top_p: 0.8, top_k: 20, min_p: 0.1, repetition_penalty: 1 },
    { name: 'Balanced', hint: 'Steady.', temperature: 0.3, top_p: 0.9, top_k: 40, min_p: 0.05, repetition_penalty: 1 },
    { name: 'Creative', hint: 'Stories.', temperature: 0.9, top_p: 0.95, top_k: 100, min_p: 0.02, repetition_penalty: 1.05 },
  ],
};

export const imageAttachment: Attachment = {
  hash: 'abc123',
  mime: 'image/png',
  size: 2048,
  original_name: 'cat.png',
  width: 10,
  height: 10,
  duration_ms: null,
  created_at: 1,
};

export const pdfAttachment: Attachment = {
  hash: 'pdf123',
  mime: 'application/pdf',
  size: 2123,
  original_name: 'report.pdf',
  width: null,
  height: null,
  duration_ms: null,
  created_at: 1,
};

/** A count as measure_context gives it: the chat's tokens, then a token per 4 characters of draft. */
export function contextUse(chatTokens: number, draftChars: number, context = 8192): ContextUse {
  const draft = Math.ceil(draftChars / 4);
  return { used: chatTokens + draft, alone: 10 + draft, limit: context - 1024, context };
}

/** A backend with one conversation, SmolLM2 loaded, and the models above. */
export function installBackend() {
  commands.clear();
  commands.set('list_conversations', () => ({ conversations: [conversation(1, 'First chat')], next: null }));
  commands.set('conversation_messages', () => []);
  commands.set('model_state', () => ({ loaded: smolLoaded, loading: null, error: null, revision: 1 }));
  commands.set('list_models', () => models);
  commands.set('get_settings', () => settings);
  commands.set('settings_choices', () => settingsChoices);
  commands.set('server_status', () => ({ address: null, active_requests: 0, error: null, loaded: [] }));
  commands.set('list_providers', () => ({ providers: [], selected: null, key_store: 'the test keyring' }));
  commands.set('list_tool_servers', () => ({ servers: [], secret_store: 'the test keyring' }));
  commands.set('list_downloads', () => []);
  commands.set('runtime_info', () => {
    throw 'no runtime in tests';
  });
  commands.set('attachment_bytes', () => [1, 2, 3]);
  commands.set('stop_reply', () => null);
  commands.set('measure_context', (args) => contextUse(40, (args.draft as string).length));
  // The backend checks each file and stores it; the kind comes from its content (here, its name).
  commands.set('attach_paths', (args) =>
    (args.paths as string[]).map((path) => ({
      ...imageAttachment,
      hash: path,
      original_name: path.split('/').pop() ?? path,
      mime: /\.(wav|mp3|m4a|flac|ogg)$/.test(path) ? 'audio/wav' : /\.(mp4|mov)$/.test(path) ? 'video/mp4' : 'image/png',
    })),
  );
  commands.set('attach_bytes', (args) => ({ ...imageAttachment, original_name: args.name as string, mime: args.mime as string }));
}
