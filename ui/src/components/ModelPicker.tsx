import { useEffect, useRef, useState } from 'react';
import {
  errorMessage,
  selectRemoteModel,
  showInFolder,
  unloadModel,
  type ModelSummary,
  type ProviderModel,
  type ProviderView,
  type Settings,
} from '../ipc';
import { humanParameters, humanSize, humanTokens } from '../lib/format';
import type { Models } from '../state/useModel';
import type { Providers } from '../state/useProviders';
import { SpeculativePick } from './SpeculativeFields';

/** The diffusion mark's explanation. */
const DENOISING_TITLE = 'Writes by denoising canvases of tokens in parallel (block diffusion), not one token at a time';

/** Why a model can't be picked, or null. */
function unsupportedReason(model: ModelSummary): string | null {
  return model.supported ? null : (model.unsupported_reason ?? "This model isn't supported yet");
}

/** What it needs against what this machine has; whether it fits is the backend's one verdict. */
function memoryNote(model: ModelSummary): { text: string; fits: boolean } {
  const needed = humanSize(model.memory_needed_bytes);
  const has = humanSize(model.machine_memory_bytes);
  return model.fits
    ? { text: `needs about ${needed} of this machine's ${has}`, fits: true }
    : { text: `may not fit: needs about ${needed}, this machine has ${has}`, fits: false };
}

interface ModelItemProps {
  model: ModelSummary;
  current: boolean;
  /** The local server has it loaded for its requests (beside the chats' model). */
  serving: boolean;
  onPick: () => void;
  onUnload: () => void;
  onShowFolder: () => void;
}

/** One model: what people choose by (family, size, quantization, memory, context, inputs), and its actions. */
function ModelItem({ model, current, serving, onPick, onUnload, onShowFolder }: ModelItemProps) {
  const reason = unsupportedReason(model);
  const memory = memoryNote(model);
  const facts = [
    model.architecture,
    model.parameters ? `${humanParameters(model.parameters)} parameters` : null,
    model.quantization,
    `${humanSize(model.size_bytes)} on disk`,
    formatName(model.format),
    model.context_length ? `${humanTokens(model.context_length)} context` : null,
  ];
  return (
    <li className="model-row" data-testid="model-row" data-path={model.path}>
      <button
        type="button"
        className={`model-item${current ? ' current' : ''}`}
        data-testid="model-item"
        data-path={model.path}
        disabled={reason !== null}
        title={reason ?? model.path}
        onClick={onPick}
      >
        <span className="model-item-name">
          {model.name}
          {model.source === 'Ollama' && (
            <span className="badge" data-testid="model-source" title="In Ollama's store, loaded from there">
              Ollama
            </span>
          )}
          {model.vision && <span className="badge">vision</span>}
          {model.audio && <span className="badge">audio</span>}
          {model.video && <span className="badge">video</span>}
          {model.denoising && (
            <span className="badge" data-testid="model-denoising" title={DENOISING_TITLE}>
              diffusion
            </span>
          )}
          {current && <span className="badge accent">loaded</span>}
          {serving && (
            <span className="badge" data-testid="model-serving" title={SERVING_TITLE}>
              server
            </span>
          )}
        </span>
        <span className="model-item-meta" data-testid="model-facts">
          {facts.filter(Boolean).join(' · ')}
        </span>
        <span className={`model-item-meta${memory.fits ? '' : ' model-item-reason'}`} data-testid="model-memory">
          {memory.text}
        </span>
        {reason && <span className="model-item-reason">{reason}</span>}
      </button>
      <span className="model-row-actions">
        {current && (
          <button type="button" className="ghost small" data-testid="unload-model" onClick={onUnload}>
            Unload
          </button>
        )}
        <button
          type="button"
          className="ghost small"
          data-testid="show-model-folder"
          aria-label={`Show ${model.name} in its folder`}
          onClick={onShowFolder}
        >
          Show in folder
        </button>
      </span>
    </li>
  );
}

/** A provider's model: picking it sends the chat's replies to that machine. */
function RemoteModelItem({
  provider,
  model,
  current,
  onPick,
}: {
  provider: ProviderView;
  model: ProviderModel;
  current: boolean;
  onPick: () => void;
}) {
  return (
    <li>
      <button
        type="button"
        className={`model-item${current ? ' current' : ''}`}
        data-testid="remote-model-item"
        data-provider={provider.id}
        data-model={model.id}
        title={`${model.id} on ${provider.name} (${provider.base_url})`}
        onClick={onPick}
      >
        <span className="model-item-name">
          {model.id}
          <span className="badge remote">remote</span>
          {model.vision && <span className="badge">vision</span>}
          {model.audio && <span className="badge">audio</span>}
          {current && <span className="badge accent">selected</span>}
        </span>
        <span className="model-item-meta">
          {[provider.name, model.context_length ? `${humanTokens(model.context_length)} context` : null].filter(Boolean).join(' · ')}
        </span>
      </button>
    </li>
  );
}

const SERVING_TITLE = 'Loaded by the local server for its requests; it unloads when idle or when another model needs the room';

interface Props {
  models: Models;
  /** The models the local server holds for its requests (their paths). */
  serverLoaded: string[];
  providers: Providers;
  onError: (message: string) => void;
  /** Opens Get models. */
  onGetModels: () => void;
  /** The saved settings (the loaded model's speculative decoding is chosen here too), and
   *  what takes them once the picker saved a change. */
  settings: Settings | null;
  onSettingsSaved: (settings: Settings) => void;
}

/** The header's model button, its status, and the popover that lists models to load and remote models to use. */
export function ModelPicker({ models, serverLoaded, providers, onError, onGetModels, settings, onSettingsSaved }: Props) {
  const [open, setOpen] = useState(false);
  const popover = useRef<HTMLDivElement>(null);
  const { state } = models;
  const remote = providers.current;
  const status = remote ? 'ready' : models.status;

  // Clicking outside closes the popover.
  useEffect(() => {
    if (!open) return;
    const close = (event: MouseEvent) => {
      if (!popover.current?.contains(event.target as Node)) setOpen(false);
    };
    // Esc closes the popover and goes no further (it would otherwise also stop a reply).
    const escape = (event: KeyboardEvent) => {
      if (event.key !== 'Escape') return;
      event.stopPropagation();
      setOpen(false);
    };
    document.addEventListener('mousedown', close);
    window.addEventListener('keydown', escape, true);
    return () => {
      document.removeEventListener('mousedown', close);
      window.removeEventListener('keydown', escape, true);
    };
  }, [open]);

  const label = remote
    ? remote.model.id
    : (state.loaded?.name ?? (status === 'loading' ? 'Loading…' : status === 'starting' ? 'Starting…' : 'Choose a model'));
  const remoteProviders = (providers.view?.providers ?? []).filter((p) => p.models.length > 0);

  const pickRemote = (provider: ProviderView, model: ProviderModel) => {
    setOpen(false);
    providers.run(() => selectRemoteModel({ provider: provider.id, model: model.id })).catch((e: unknown) => onError(errorMessage(e)));
  };

  const pickLocal = (path: string) => {
    setOpen(false);
    // The loaded model needs no reload: replies just come back to it.
    if (remote && state.loaded?.path === path) {
      providers.run(() => selectRemoteModel(null)).catch((e: unknown) => onError(errorMessage(e)));
      return;
    }
    models.load(path);
  };

  return (
    <div className="model-picker" ref={popover}>
      <button
        type="button"
        className="model-button"
        data-testid="model-picker"
        aria-haspopup="dialog"
        aria-expanded={open}
        onClick={() => {
          if (!open) {
            models.refreshModels();
            providers.refresh();
          }
          setOpen(!open);
        }}
      >
        <span className={`status-dot ${status}`} aria-hidden="true" />
        <span className="model-button-label">{label}</span>
        <span aria-hidden="true">▾</span>
      </button>
      <div className="model-status" data-testid="model-status" data-state={status} aria-live="polite">
        {state.loading && (
          <>
            <span className="muted" data-testid="load-stage">
              Loading {state.loading.name}… {state.loading.stage}
            </span>
            <progress data-testid="load-progress" max={1} value={state.loading.fraction} />
          </>
        )}
        {remote && (
          <span className="muted" data-testid="remote-status">
            {[`on ${remote.provider.name}`, remote.model.vision && 'vision', remote.model.audio && 'audio'].filter(Boolean).join(' · ')}
          </span>
        )}
        {!remote && !state.loading && state.error && <span className="model-error">Could not load the model: {state.error}</span>}
        {status === 'none' && <span className="muted">No model loaded</span>}
        {!remote && !state.loading && !state.error && state.loaded && (
          <span className="muted">
            {[
              `${humanTokens(state.loaded.context_length)} context`,
              state.loaded.kv_quantization && `${state.loaded.kv_quantization.bits}-bit keys/values`,
              state.loaded.vision && 'vision',
              state.loaded.audio && 'audio',
              state.loaded.video && 'video',
              state.loaded.denoising && 'diffusion',
            ]
              .filter(Boolean)
              .join(' · ')}
          </span>
        )}
      </div>
      {open && (
        <div className="popover model-popover" role="dialog" aria-label="Models">
          {models.models === null ? (
            <p className="muted">Looking for models…</p>
          ) : models.models.length === 0 ? (
            <NoModels error={models.listError} />
          ) : (
            <ul className="model-list">
              {models.models.map((model) => (
                <ModelItem
                  key={model.path}
                  model={model}
                  current={!remote && state.loaded?.path === model.path}
                  serving={serverLoaded.includes(model.path)}
                  onPick={() => pickLocal(model.path)}
                  onUnload={() => {
                    setOpen(false);
                    unloadModel().catch((e: unknown) => onError(errorMessage(e)));
                  }}
                  onShowFolder={() => showInFolder(model.path).catch((e: unknown) => onError(errorMessage(e)))}
                />
              ))}
            </ul>
          )}
          {!remote && state.loaded && settings && (
            <SpeculativePick loaded={state.loaded} settings={settings} onSaved={onSettingsSaved} onError={onError} />
          )}
          {remoteProviders.map((provider) => (
            <div key={provider.id} className="model-group" data-testid="remote-model-group">
              <h4 className="model-group-title">
                Remote: {provider.name} <span className="muted">{provider.base_url}</span>
              </h4>
              <ul className="model-list">
                {provider.models.map((model) => (
                  <RemoteModelItem
                    key={model.id}
                    provider={provider}
                    model={model}
                    current={remote?.provider.id === provider.id && remote.model.id === model.id}
                    onPick={() => pickRemote(provider, model)}
                  />
                ))}
              </ul>
            </div>
          ))}
          <button
            type="button"
            className="ghost model-get-more"
            data-testid="get-more-models"
            onClick={() => {
              setOpen(false);
              onGetModels();
            }}
          >
            Get more models…
          </button>
        </div>
      )}
    </div>
  );
}

export function NoModels({ error }: { error?: string | null }) {
  return (
    <div className="no-models">
      <p>
        <strong>No models found.</strong>
      </p>
      <p className="muted">
        Add a folder with models in Settings: Hugging Face folders and <code>.gguf</code> files are found in it, as they are in the Hugging
        Face cache, LM Studio's folders and Ollama's store.
      </p>
      {error && <p className="model-error">{error}</p>}
    </div>
  );
}

/** The engine says `Gguf` / `Safetensors`; people say GGUF and safetensors. */
function formatName(format: string): string {
  return format.toLowerCase() === 'gguf' ? 'GGUF' : format.toLowerCase();
}
