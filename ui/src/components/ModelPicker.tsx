import { useEffect, useRef, useState } from 'react';
import type { ModelSummary } from '../ipc';
import { humanSize, humanTokens } from '../lib/format';
import type { Models } from '../state/useModel';

/** Why a model can't be picked, or null. */
function unsupportedReason(model: ModelSummary): string | null {
  return model.supported ? null : `The ${model.architecture || 'model'} architecture isn't supported yet`;
}

function ModelItem({ model, current, onPick }: { model: ModelSummary; current: boolean; onPick: () => void }) {
  const reason = unsupportedReason(model);
  return (
    <li>
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
          {model.vision && <span className="badge">vision</span>}
          {model.audio && <span className="badge">audio</span>}
          {current && <span className="badge accent">loaded</span>}
        </span>
        <span className="model-item-meta">
          {[humanSize(model.size_bytes), model.quantization, formatName(model.format), model.context_length ? `${humanTokens(model.context_length)} context` : null]
            .filter(Boolean)
            .join(' · ')}
        </span>
        {reason && <span className="model-item-reason">{reason}</span>}
      </button>
    </li>
  );
}

/** The header's model button, its status, and the popover that lists models to load. */
export function ModelPicker({ models }: { models: Models }) {
  const [open, setOpen] = useState(false);
  const popover = useRef<HTMLDivElement>(null);
  const { state, status } = models;

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

  const loadingName = state.loading ? (models.models?.find((m) => m.path === state.loading?.path)?.name ?? state.loading.path.split('/').pop()) : null;
  const label = state.loaded?.name ?? (status === 'loading' ? 'Loading…' : 'Choose a model');

  return (
    <div className="model-picker" ref={popover}>
      <button
        type="button"
        className="model-button"
        data-testid="model-picker"
        aria-haspopup="listbox"
        aria-expanded={open}
        onClick={() => {
          if (!open) models.refreshModels();
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
            <span className="muted">
              Loading {loadingName}: {state.loading.stage}
            </span>
            <progress data-testid="load-progress" max={1} value={state.loading.fraction} />
          </>
        )}
        {!state.loading && state.error && <span className="model-error">Could not load the model: {state.error}</span>}
        {!state.loading && !state.error && !state.loaded && <span className="muted">No model loaded</span>}
        {!state.loading && !state.error && state.loaded && (
          <span className="muted">
            {[`${humanTokens(state.loaded.context_length)} context`, state.loaded.vision && 'vision', state.loaded.audio && 'audio']
              .filter(Boolean)
              .join(' · ')}
          </span>
        )}
      </div>
      {open && (
        <div className="popover model-popover" role="listbox">
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
                  current={state.loaded?.path === model.path}
                  onPick={() => {
                    setOpen(false);
                    models.load(model.path);
                  }}
                />
              ))}
            </ul>
          )}
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
        Add a folder with models in Settings: Hugging Face folders and <code>.gguf</code> files are found in it,
        as they are in the Hugging Face cache and LM Studio's folders.
      </p>
      {error && <p className="model-error">{error}</p>}
    </div>
  );
}

/** The engine says `Gguf` / `Safetensors`; people say GGUF and safetensors. */
function formatName(format: string): string {
  return format.toLowerCase() === 'gguf' ? 'GGUF' : format.toLowerCase();
}
