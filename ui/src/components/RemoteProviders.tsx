import { useState, type KeyboardEvent } from 'react';
import {
  errorMessage,
  markRemoteModelInputs,
  refreshProviderModels,
  removeProvider,
  saveProvider,
  type ProviderView,
  type ProvidersView,
} from '../ipc';
import type { Providers } from '../state/useProviders';
import { ErrorBanner } from './ErrorBanner';
import { Field } from './Field';

/** The add/edit form. The key field starts empty: a saved key never comes back to the page. */
interface Draft {
  id: number | null;
  name: string;
  base_url: string;
  api_key: string;
  /** Editing: remove the saved key. */
  remove_key: boolean;
}

const blank: Draft = { id: null, name: '', base_url: '', api_key: '', remove_key: false };

/** Settings' "Remote providers": OpenAI-compatible servers on other machines, their keys and models. */
export function RemoteProviders({ providers }: { providers: Providers }) {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const list = providers.view?.providers ?? [];

  /** Runs a command; its error shows in this section. Resolves true on success. */
  const act = async (what: string, command: () => Promise<ProvidersView>): Promise<boolean> => {
    setBusy(what);
    setError(null);
    try {
      await providers.run(command);
      return true;
    } catch (e) {
      setError(errorMessage(e));
      return false;
    } finally {
      setBusy(null);
    }
  };

  const save = async () => {
    if (!draft) return;
    const key = draft.api_key.trim();
    const api_key = draft.remove_key ? '' : key ? key : draft.id === null ? '' : null;
    const input = { id: draft.id, name: draft.name, base_url: draft.base_url, api_key };
    const known = new Set(list.map((p) => p.id));
    let answer: ProvidersView | null = null;
    const saved = await act('save', async () => (answer = await saveProvider(input)));
    if (!saved) return;
    setDraft(null);
    // A new provider's models are asked for at once, so that they are in the model menu.
    const added = (answer as ProvidersView | null)?.providers.find((p) => !known.has(p.id));
    if (added) await act('refresh', () => refreshProviderModels(added.id));
  };

  // Enter in a field saves the provider, not the whole settings pane.
  const onEnter = (event: KeyboardEvent) => {
    if (event.key === 'Enter') {
      event.preventDefault();
      void save();
    }
  };

  const edit = (provider: ProviderView) =>
    setDraft({ id: provider.id, name: provider.name, base_url: provider.base_url, api_key: '', remove_key: false });

  return (
    <section data-testid="remote-providers">
      <h4>Remote providers</h4>
      <p className="field-hint muted">
        OpenAI-compatible servers on other machines (vLLM, llama.cpp, Ollama, LM Studio, another Confab) or a hosted API. Nothing is sent
        anywhere until you add one and pick one of its models; keys are kept in {providers.view?.key_store ?? 'the system keychain'}.
      </p>
      {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
      <ul className="provider-list">
        {list.map((provider) => (
          <li key={provider.id} className="provider-item" data-testid="provider-item" data-id={provider.id}>
            <div className="provider-head">
              <strong>{provider.name}</strong> <code>{provider.base_url}</code>{' '}
              <span className="muted" data-testid="provider-key-status">
                {provider.has_key ? 'key saved' : 'no key'}
              </span>
            </div>
            <div className="provider-actions">
              <button
                type="button"
                className="small"
                data-testid="provider-refresh"
                disabled={busy !== null}
                onClick={() => void act('refresh', () => refreshProviderModels(provider.id))}
              >
                {busy === 'refresh' ? 'Asking…' : 'Refresh models'}
              </button>
              <button
                type="button"
                className="ghost small"
                data-testid="provider-edit"
                disabled={busy !== null}
                onClick={() => edit(provider)}
              >
                Edit
              </button>
              <button
                type="button"
                className="ghost small"
                data-testid="provider-remove"
                disabled={busy !== null}
                onClick={() => void act('remove', () => removeProvider(provider.id))}
              >
                Remove
              </button>
            </div>
            {provider.models.length === 0 ? (
              <p className="muted small">No models listed yet: Refresh models asks the server.</p>
            ) : (
              <table className="provider-models">
                <thead>
                  <tr>
                    <th>Model</th>
                    <th title="Send images to it">Images</th>
                    <th title="Send audio to it">Audio</th>
                  </tr>
                </thead>
                <tbody>
                  {provider.models.map((model) => (
                    <tr key={model.id} data-testid="provider-model" data-model={model.id}>
                      <td>
                        <code>{model.id}</code>
                      </td>
                      {(['vision', 'audio'] as const).map((input) => (
                        <td key={input}>
                          <input
                            type="checkbox"
                            data-testid={`provider-model-${input}`}
                            aria-label={`${model.id} takes ${input === 'vision' ? 'images' : 'audio'}`}
                            title={model.inputs_reported ? 'The server says what this model takes' : 'Mark it if the model takes this'}
                            checked={model[input]}
                            disabled={model.inputs_reported || busy !== null}
                            onChange={(event) => {
                              const vision = input === 'vision' ? event.target.checked : model.vision;
                              const audio = input === 'audio' ? event.target.checked : model.audio;
                              void act('mark', () => markRemoteModelInputs(provider.id, model.id, vision, audio));
                            }}
                          />
                        </td>
                      ))}
                    </tr>
                  ))}
                </tbody>
              </table>
            )}
          </li>
        ))}
      </ul>
      {draft ? (
        <div className="provider-form" data-testid="provider-form">
          <div className="field-grid">
            <Field label="Name">
              <input
                type="text"
                data-testid="provider-name"
                placeholder="Workstation"
                value={draft.name}
                onKeyDown={onEnter}
                onChange={(event) => setDraft({ ...draft, name: event.target.value })}
              />
            </Field>
            <Field label="Base URL" hint="Such as http://192.168.1.20:8000/v1">
              <input
                type="url"
                data-testid="provider-url"
                placeholder="http://host:8000/v1"
                value={draft.base_url}
                onKeyDown={onEnter}
                onChange={(event) => setDraft({ ...draft, base_url: event.target.value })}
              />
            </Field>
            <Field
              label="API key"
              hint={
                draft.id !== null && list.find((p) => p.id === draft.id)?.has_key
                  ? 'A key is saved; type a new one to replace it.'
                  : 'Sent as a Bearer token; empty: none.'
              }
            >
              <input
                type="password"
                autoComplete="off"
                data-testid="provider-key"
                placeholder={draft.id !== null && list.find((p) => p.id === draft.id)?.has_key ? 'Saved' : 'None'}
                value={draft.api_key}
                disabled={draft.remove_key}
                onKeyDown={onEnter}
                onChange={(event) => setDraft({ ...draft, api_key: event.target.value })}
              />
            </Field>
          </div>
          {draft.id !== null && list.find((p) => p.id === draft.id)?.has_key && (
            <label className="field checkbox-field">
              <input
                type="checkbox"
                data-testid="provider-remove-key"
                checked={draft.remove_key}
                onChange={(event) => setDraft({ ...draft, remove_key: event.target.checked, api_key: '' })}
              />
              <span className="field-label">Remove the saved key</span>
            </label>
          )}
          <div className="edit-actions">
            <button type="button" className="ghost" onClick={() => setDraft(null)}>
              Cancel
            </button>
            <button type="button" className="primary" data-testid="provider-save" disabled={busy !== null} onClick={() => void save()}>
              {busy === 'save' ? 'Saving…' : draft.id === null ? 'Add provider' : 'Save provider'}
            </button>
          </div>
        </div>
      ) : (
        <button type="button" data-testid="provider-add" onClick={() => setDraft(blank)}>
          Add provider
        </button>
      )}
    </section>
  );
}
