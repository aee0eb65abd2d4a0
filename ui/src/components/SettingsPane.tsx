import { useEffect, useState } from 'react';
import {
  errorMessage,
  getSettings,
  listModels,
  saveSettings,
  settingsChoices,
  type ModelInfo,
  type ModelSummary,
  type SamplingPreset,
  type Settings,
  type SettingsChoices,
  type SpeculativeChoice,
  type Theme,
  type ToolUse,
} from '../ipc';
import { ErrorBanner } from './ErrorBanner';
import { LocalServerFields, type ServerForm } from './LocalServerFields';
import { RemoteProviders } from './RemoteProviders';
import { SpeculativeFields } from './SpeculativeFields';
import type { Providers } from '../state/useProviders';
import { StatusPanel } from './StatusPanel';
import { ToolServers } from './ToolServers';
import { Field } from './Field';
import { FolderPicker } from './FolderPicker';
import { Icon } from './Icon';
import { DenoisingSettings } from './Canvas';

/** The numeric fields, edited as text so that a half-typed number isn't rewritten under the
 *  cursor, by the group they show in. `whole`: only whole numbers from 1 up. `modelsOwn`: may be
 *  left empty, and then the model's own default applies (its generation_config.json).
 *  `sampler`: a token sampler's, hidden while a denoising model is loaded (its own parameters
 *  show instead). */
const numberFields = [
  {
    group: 'Chat',
    key: 'temperature',
    sampler: true,
    label: 'Temperature',
    step: '0.05',
    hint: 'Higher is more varied; 0 always picks the likeliest token.',
    modelsOwn: true,
  },
  {
    group: 'Chat',
    key: 'top_p',
    sampler: true,
    label: 'Top-p',
    step: '0.05',
    hint: 'Sample from the smallest set of tokens this likely together.',
    modelsOwn: true,
  },
  {
    group: 'Chat',
    key: 'top_k',
    label: 'Top-k',
    step: '1',
    hint: 'Sample from this many likeliest tokens (0: all).',
    modelsOwn: true,
    sampler: true,
  },
  {
    group: 'Chat',
    key: 'min_p',
    sampler: true,
    label: 'Min-p',
    step: '0.01',
    hint: "Drop tokens less likely than this fraction of the top one's.",
    modelsOwn: true,
  },
  {
    group: 'Chat',
    key: 'repetition_penalty',
    label: 'Repetition penalty',
    step: '0.05',
    hint: '1 turns it off.',
    modelsOwn: true,
    sampler: true,
  },
  { group: 'Chat', key: 'max_tokens', label: 'Max tokens', step: '1', hint: 'The longest reply.' },
  { group: 'Storage', key: 'kv_cache_memory_mb', label: 'Prompt cache in memory (MiB)', step: '64', hint: 'Reused prompts answer faster.' },
  { group: 'Storage', key: 'kv_cache_disk_mb', label: 'Prompt cache on disk (MiB)', step: '256', hint: 'Kept across restarts.' },
  {
    group: 'Storage',
    key: 'reply_memory_percent',
    label: 'Memory for replies (%)',
    step: '5',
    hint: 'Of the memory left beside the model. A reply that needs more waits its turn. From the next launch.',
    whole: true,
  },
  {
    group: 'Tools',
    key: 'tool_rounds',
    label: 'Tool rounds per reply',
    step: '1',
    hint: 'A reply that calls tools more rounds in a row than this is stopped.',
    whole: true,
  },
  {
    group: 'Tools',
    key: 'tool_timeout_s',
    label: 'Tool timeout (s)',
    step: '1',
    hint: 'A tool call running longer is given up.',
    whole: true,
  },
] as const;

type NumberKey = (typeof numberFields)[number]['key'];

interface Form extends ServerForm {
  system_prompt: string;
  numbers: Record<NumberKey, string>;
  seed: string;
  model_folders: string[];
  theme: Theme;
  /** The loaded model's keys/values bits as chosen here: '' (full precision), '8' or '4';
   *  null: unchanged (the saved choice shows). */
  kv_bits: string | null;
  /** The embedding model's path; '': the first one found. */
  embedding_model: string;
  speculative: SpeculativeChoice;
  tool_use: ToolUse;
  /** The loaded model's draft model as chosen here ('': none); null: unchanged (the saved one shows). */
  draft: string | null;
}

/** The precisions offered for a model's keys and values (mlx-lm's `--kv-bits`, group 64). */
const kvChoices = [
  { value: '', label: 'Full precision' },
  { value: '8', label: '8-bit (about half the memory of 16-bit)' },
  { value: '4', label: '4-bit (about a third)' },
] as const;

function toForm(settings: Settings): Form {
  const numbers = Object.fromEntries(numberFields.map(({ key }) => [key, settings[key] === null ? '' : String(settings[key])])) as Record<
    NumberKey,
    string
  >;
  return {
    system_prompt: settings.system_prompt,
    numbers,
    seed: settings.seed === null ? '' : String(settings.seed),
    model_folders: settings.model_folders,
    theme: settings.theme,
    server_enabled: settings.server_enabled,
    server_port: String(settings.server_port),
    server_key: settings.server_key,
    server_origins: settings.server_origins.join(', '),
    kv_bits: null,
    embedding_model: settings.embedding_model ?? '',
    speculative: settings.speculative,
    tool_use: settings.tool_use,
    draft: null,
  };
}

/** The settings to save, or the first field that isn't a number. */
function fromForm(form: Form, base: Settings, loadedPath: string | null): Settings | string {
  const modelKvBits = { ...base.model_kv_bits };
  if (loadedPath !== null && form.kv_bits !== null) {
    if (form.kv_bits === '') delete modelKvBits[loadedPath];
    else modelKvBits[loadedPath] = Number(form.kv_bits);
  }
  const modelDrafts = { ...base.model_drafts };
  if (loadedPath !== null && form.draft !== null) {
    if (form.draft === '') delete modelDrafts[loadedPath];
    else modelDrafts[loadedPath] = form.draft;
  }
  const next: Settings = {
    ...base,
    model_kv_bits: modelKvBits,
    model_drafts: modelDrafts,
    speculative: form.speculative,
    tool_use: form.tool_use,
    system_prompt: form.system_prompt,
    model_folders: form.model_folders,
    theme: form.theme,
    server_enabled: form.server_enabled,
    server_key: form.server_key.trim(),
    server_origins: form.server_origins.split(/[\s,]+/).filter((origin) => origin !== ''),
    embedding_model: form.embedding_model === '' ? null : form.embedding_model,
  };
  const port = Number(form.server_port);
  if (!Number.isInteger(port) || port < 1024 || port > 65535) return 'The server port must be a whole number from 1024 to 65535.';
  next.server_port = port;
  for (const field of numberFields) {
    const { key, label } = field;
    if ('modelsOwn' in field && form.numbers[key].trim() === '') {
      (next as Record<NumberKey, number | null>)[key] = null;
      continue;
    }
    const value = Number(form.numbers[key]);
    if (form.numbers[key].trim() === '' || !Number.isFinite(value)) return `${label} must be a number.`;
    if ('whole' in field && (!Number.isInteger(value) || value < 1)) return `${label} must be a whole number from 1 up.`;
    next[key] = value;
  }
  if (form.seed.trim() === '') next.seed = null;
  else {
    const seed = Number(form.seed);
    if (!Number.isInteger(seed) || seed < 0) return 'Seed must be a whole number, or empty for a new seed each reply.';
    next.seed = seed;
  }
  return next;
}

interface Props {
  /** Remote providers save at once (their keys never travel with the other settings). */
  providers: Providers;
  /** The local model loaded now: its keys/values precision is chosen here. */
  loaded: ModelInfo | null;
  onSaved: (settings: Settings) => void;
  /** The theme as picked, applied at once; `null` goes back to the saved one. */
  onPreviewTheme: (theme: Theme | null) => void;
  onClose: () => void;
}

/** The sampling fields a preset sets. */
const presetKeys = ['temperature', 'top_p', 'top_k', 'min_p', 'repetition_penalty'] as const;

function presetMatches(preset: SamplingPreset, numbers: Record<NumberKey, string>): boolean {
  return presetKeys.every((key) => {
    const value = preset[key];
    const typed = numbers[key].trim();
    return value === null ? typed === '' : typed !== '' && Number(typed) === value;
  });
}

/** `preset-model` for "Model's own", `preset-balanced` for "Balanced". */
function presetId(preset: SamplingPreset): string {
  return `preset-${preset.name.toLowerCase().split(/[^a-z]/)[0]}`;
}

/** The pane's groups, in order; the links at the top scroll to them. */
const groups = ['Chat', 'Model', 'Appearance', 'Storage', 'Tools', 'Advanced'] as const;

type Group = (typeof groups)[number];

const fieldsOf = (group: Group) => numberFields.filter((field) => field.group === group);

function groupId(group: Group): string {
  return `settings-${group.toLowerCase()}`;
}

/** Generation, models, cache and appearance settings, saved together. */
export function SettingsPane({ providers, loaded, onSaved, onPreviewTheme, onClose }: Props) {
  const loadedPath = loaded?.path ?? null;
  const denoising = loaded?.denoising ?? null;
  const [saved, setSaved] = useState<Settings | null>(null);
  const [form, setForm] = useState<Form | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  const [newFolder, setNewFolder] = useState('');
  const [browsing, setBrowsing] = useState(false);
  const [choices, setChoices] = useState<SettingsChoices | null>(null);
  const [embedders, setEmbedders] = useState<ModelSummary[] | null>(null);

  useEffect(() => {
    let live = true;
    listModels().then(
      (found) => live && setEmbedders(found.filter((model) => model.embedding && model.supported)),
      () => live && setEmbedders([]),
    );
    settingsChoices().then(
      (found) => live && setChoices(found),
      () => {
        /* Without them the pane has no presets and no reset; the settings still work. */
      },
    );
    getSettings().then(
      (settings) => {
        if (!live) return;
        setSaved(settings);
        setForm(toForm(settings));
      },
      (e: unknown) => live && setError(`Could not read the settings: ${errorMessage(e)}`),
    );
    return () => {
      live = false;
    };
  }, []);

  const close = () => {
    onPreviewTheme(null);
    onClose();
  };

  const save = async () => {
    if (!form || !saved) return;
    const next = fromForm(form, saved, loadedPath);
    if (typeof next === 'string') {
      setError(next);
      return;
    }
    setSaving(true);
    setError(null);
    try {
      const stored = await saveSettings(next);
      setSaved(stored);
      setForm(toForm(stored));
      onSaved(stored);
      onPreviewTheme(null);
      onClose();
    } catch (e) {
      setError(errorMessage(e));
    } finally {
      setSaving(false);
    }
  };

  // The loaded model's choice as the pane shows it: edited here, else saved.
  const kvBits = form && saved && loadedPath !== null ? (form.kv_bits ?? String(saved.model_kv_bits[loadedPath] ?? '')) : null;

  const update = (change: Partial<Form>) => setForm((previous) => (previous ? { ...previous, ...change } : previous));

  const applyPreset = (preset: SamplingPreset) => {
    if (!form) return;
    const numbers = { ...form.numbers };
    for (const key of presetKeys) {
      const value = preset[key];
      numbers[key] = value === null ? '' : String(value);
    }
    update({ numbers });
  };

  /** The defaults in the form, keeping the model folders and the server's key (saved on Save). */
  const resetToDefaults = () => {
    if (!form || !saved || !choices) return;
    const defaults = toForm({ ...choices.defaults, model_folders: form.model_folders, server_key: form.server_key });
    // Full precision is the default for the loaded model too.
    setForm({ ...defaults, kv_bits: loadedPath === null ? null : '' });
    onPreviewTheme(defaults.theme);
  };

  const addFolder = (folder = newFolder.trim()) => {
    if (!form || !folder || form.model_folders.includes(folder)) return;
    update({ model_folders: [...form.model_folders, folder] });
    setNewFolder('');
  };

  return (
    <div className="modal-backdrop" onMouseDown={(event) => event.target === event.currentTarget && close()}>
      <div className="modal settings-pane" role="dialog" aria-modal="true" aria-label="Settings" data-testid="settings-pane">
        <header className="modal-header">
          <h2>Settings</h2>
          <button type="button" className="ghost" data-testid="settings-close" aria-label="Close settings" onClick={close}>
            <Icon name="close" size={14} />
          </button>
        </header>
        <div className="modal-body">
          {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
          {!form ? (
            !error && <p className="muted">Loading…</p>
          ) : (
            <form
              onSubmit={(event) => {
                event.preventDefault();
                void save();
              }}
            >
              <nav className="settings-groups" aria-label="Settings groups">
                {groups.map((group) => (
                  <button
                    key={group}
                    type="button"
                    className="ghost small"
                    onClick={() => document.getElementById(groupId(group))?.scrollIntoView({ block: 'start' })}
                  >
                    {group}
                  </button>
                ))}
              </nav>
              <section id={groupId('Chat')} aria-labelledby={`${groupId('Chat')}-title`}>
                <h3 id={`${groupId('Chat')}-title`}>Chat</h3>
                <Field label="System prompt" hint="Sent before every chat that has no system prompt of its own.">
                  <textarea
                    data-testid="setting-system_prompt"
                    rows={4}
                    value={form.system_prompt}
                    onChange={(event) => update({ system_prompt: event.target.value })}
                  />
                </Field>
                {loaded && denoising && <DenoisingSettings name={loaded.name} params={denoising} />}
                {choices && !denoising && (
                  <div className="presets" role="group" aria-label="Sampling presets" data-testid="sampling-presets">
                    {choices.presets.map((preset) => (
                      <button
                        key={preset.name}
                        type="button"
                        className="preset"
                        title={preset.hint}
                        aria-pressed={presetMatches(preset, form.numbers)}
                        data-testid={presetId(preset)}
                        onClick={() => applyPreset(preset)}
                      >
                        {preset.name}
                      </button>
                    ))}
                  </div>
                )}
                <div className="field-grid">
                  {fieldsOf('Chat')
                    .filter((field) => !(denoising && 'sampler' in field))
                    .map((field) => (
                      <Field key={field.key} label={field.label} hint={field.hint}>
                        <input
                          type="number"
                          step={field.step}
                          placeholder={'modelsOwn' in field ? "Model's" : undefined}
                          data-testid={`setting-${field.key}`}
                          value={form.numbers[field.key]}
                          onChange={(event) => update({ numbers: { ...form.numbers, [field.key]: event.target.value } })}
                        />
                      </Field>
                    ))}
                  <Field label="Seed" hint="Empty: a new seed each reply.">
                    <input
                      type="number"
                      step="1"
                      min="0"
                      placeholder="Random"
                      data-testid="setting-seed"
                      value={form.seed}
                      onChange={(event) => update({ seed: event.target.value })}
                    />
                  </Field>
                </div>
              </section>
              <section id={groupId('Model')} aria-labelledby={`${groupId('Model')}-title`}>
                <h3 id={`${groupId('Model')}-title`}>Model</h3>
                {loaded && kvBits !== null && (
                  <Field
                    label={`Keys and values of ${loaded.name}`}
                    hint={
                      loaded.kv_quantization_declined && loaded.kv_quantization === null && kvBits !== ''
                        ? `Kept in full precision: ${loaded.kv_quantization_declined}`
                        : 'Quantized keys and values fit longer chats in memory (decoding on a CPU is slower). Saving reloads the model.'
                    }
                  >
                    <select data-testid="setting-kv_bits" value={kvBits} onChange={(event) => update({ kv_bits: event.target.value })}>
                      {kvChoices.map((choice) => (
                        <option key={choice.value} value={choice.value}>
                          {choice.label}
                        </option>
                      ))}
                    </select>
                  </Field>
                )}
                <SpeculativeFields
                  loaded={loaded}
                  method={form.speculative}
                  draft={form.draft ?? (loadedPath !== null && saved ? (saved.model_drafts[loadedPath] ?? '') : '')}
                  onChange={({ speculative, draft }) =>
                    update({ ...(speculative && { speculative }), ...(draft !== undefined && { draft }) })
                  }
                />
                <EmbeddingModelField
                  embedders={embedders}
                  value={form.embedding_model}
                  onChange={(embedding_model) => update({ embedding_model })}
                />
                <h4>Model folders</h4>
                <p className="field-hint muted">
                  Searched for models besides the app's own folder, the Hugging Face cache, LM Studio's folders and Ollama's store.
                </p>
                <ul className="folder-list">
                  {form.model_folders.map((folder) => (
                    <li key={folder}>
                      <code>{folder}</code>
                      <button
                        type="button"
                        className="ghost small"
                        aria-label={`Remove ${folder}`}
                        onClick={() => update({ model_folders: form.model_folders.filter((f) => f !== folder) })}
                      >
                        Remove
                      </button>
                    </li>
                  ))}
                </ul>
                <div className="folder-add">
                  <input
                    type="text"
                    placeholder="/path/to/models"
                    aria-label="Folder to add"
                    data-testid="setting-model_folder_new"
                    value={newFolder}
                    onChange={(event) => setNewFolder(event.target.value)}
                    onKeyDown={(event) => {
                      if (event.key === 'Enter') {
                        event.preventDefault();
                        addFolder();
                      }
                    }}
                  />
                  <button type="button" onClick={() => addFolder()} disabled={!newFolder.trim()}>
                    Add
                  </button>
                  <button type="button" onClick={() => setBrowsing(true)} data-testid="setting-model_folder_browse">
                    <Icon name="folder" /> Browse…
                  </button>
                </div>
                {browsing && (
                  <FolderPicker
                    start={newFolder.trim().startsWith('/') ? newFolder.trim() : null}
                    onPick={(folder) => {
                      addFolder(folder);
                      setBrowsing(false);
                    }}
                    onClose={() => setBrowsing(false)}
                  />
                )}
              </section>
              <section id={groupId('Appearance')} aria-labelledby={`${groupId('Appearance')}-title`}>
                <h3 id={`${groupId('Appearance')}-title`}>Appearance</h3>
                <Field label="Theme">
                  <select
                    data-testid="setting-theme"
                    value={form.theme}
                    onChange={(event) => {
                      const theme = event.target.value as Theme;
                      update({ theme });
                      onPreviewTheme(theme);
                    }}
                  >
                    <option value="system">Match the system</option>
                    <option value="light">Light</option>
                    <option value="dark">Dark</option>
                  </select>
                </Field>
              </section>
              <section id={groupId('Storage')} aria-labelledby={`${groupId('Storage')}-title`}>
                <h3 id={`${groupId('Storage')}-title`}>Storage</h3>
                <div className="field-grid">
                  {fieldsOf('Storage').map(({ key, label, step, hint }) => (
                    <Field key={key} label={label} hint={hint}>
                      <input
                        type="number"
                        step={step}
                        min="0"
                        data-testid={`setting-${key}`}
                        value={form.numbers[key]}
                        onChange={(event) => update({ numbers: { ...form.numbers, [key]: event.target.value } })}
                      />
                    </Field>
                  ))}
                </div>
              </section>
              <section id={groupId('Tools')} aria-labelledby={`${groupId('Tools')}-title`}>
                <h3 id={`${groupId('Tools')}-title`}>Tools</h3>
                <Field
                  label="When tools are on"
                  hint="Always: each reply of the loaded model starts with a tool call (held to the tool's schema)."
                >
                  <select
                    data-testid="setting-tool_use"
                    value={form.tool_use}
                    onChange={(event) => update({ tool_use: event.target.value as ToolUse })}
                  >
                    <option value="auto">The model decides</option>
                    <option value="required">Always call a tool</option>
                  </select>
                </Field>
                <div className="field-grid">
                  {fieldsOf('Tools').map(({ key, label, step, hint }) => (
                    <Field key={key} label={label} hint={hint}>
                      <input
                        type="number"
                        step={step}
                        min="1"
                        data-testid={`setting-${key}`}
                        value={form.numbers[key]}
                        onChange={(event) => update({ numbers: { ...form.numbers, [key]: event.target.value } })}
                      />
                    </Field>
                  ))}
                </div>
                <ToolServers />
              </section>
              <section id={groupId('Advanced')} aria-labelledby={`${groupId('Advanced')}-title`}>
                <h3 id={`${groupId('Advanced')}-title`}>Advanced</h3>
                <LocalServerFields form={form} onChange={update} />
                <RemoteProviders providers={providers} />
                <div className="about">
                  <h4>About</h4>
                  <StatusPanel />
                </div>
              </section>
            </form>
          )}
        </div>
        <footer className="modal-footer">
          <button
            type="button"
            className="ghost settings-reset"
            data-testid="settings-reset"
            title="Puts back the default settings, keeping your model folders and the server's key; nothing is saved until Save."
            disabled={!form || !choices}
            onClick={resetToDefaults}
          >
            Reset to defaults
          </button>
          <button type="button" className="ghost" onClick={close}>
            Cancel
          </button>
          <button type="button" className="primary" data-testid="settings-save" disabled={!form || saving} onClick={() => void save()}>
            {saving ? 'Saving…' : 'Save'}
          </button>
        </footer>
      </div>
    </div>
  );
}

/** The embedding model that searches documents too large for the context; never a chat model. */
function EmbeddingModelField({
  embedders,
  value,
  onChange,
}: {
  embedders: ModelSummary[] | null;
  value: string;
  onChange: (path: string) => void;
}) {
  const found = embedders ?? [];
  const missing = value !== '' && embedders !== null && !found.some((model) => model.path === value);
  const hint =
    embedders !== null && found.length === 0
      ? 'None found: get Qwen3-Embedding-0.6B in Get models. Documents larger than the context need one to be searched.'
      : missing
        ? 'This model is no longer in the model folders; documents too large for the context cannot be searched until another is picked.'
        : 'Searches documents too large for the context; loaded beside the chat model when one needs it.';
  return (
    <Field label="Embedding model" hint={hint}>
      <select data-testid="setting-embedding_model" value={value} onChange={(event) => onChange(event.target.value)}>
        <option value="">{found[0] ? `The first found (${found[0].name})` : 'The first found (none yet)'}</option>
        {found.map((model) => (
          <option key={model.path} value={model.path}>
            {model.name} · embedding model
          </option>
        ))}
        {missing && <option value={value}>{value} (missing)</option>}
      </select>
    </Field>
  );
}
