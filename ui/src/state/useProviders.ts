// Remote providers and the remote model picked, shared by the model menu, the header and the
// settings pane. Every change is a command that answers with the whole list (without keys).
import { useCallback, useEffect, useMemo, useState } from 'react';
import { listProviders, type ProviderModel, type ProvidersView, type ProviderView } from '../ipc';

export interface RemoteModelChoice {
  provider: ProviderView;
  model: ProviderModel;
}

export interface Providers {
  /** Null until listed. */
  view: ProvidersView | null;
  /** The remote model replies go to, or null: the local model. */
  current: RemoteModelChoice | null;
  /** Runs a command that answers with the list and keeps that answer; rejects with its error. */
  run: (command: () => Promise<ProvidersView>) => Promise<void>;
  refresh: () => void;
}

/** The picked model, looked up in the list (null when it is gone). */
export function currentChoice(view: ProvidersView | null): RemoteModelChoice | null {
  const selected = view?.selected;
  if (!selected) return null;
  const provider = view.providers.find((p) => p.id === selected.provider);
  const model = provider?.models.find((m) => m.id === selected.model);
  return provider && model ? { provider, model } : null;
}

export function useProviders(): Providers {
  const [view, setView] = useState<ProvidersView | null>(null);

  const refresh = useCallback(() => {
    listProviders().then(setView, () => {
      /* No providers known: the local model it is, as before any were added. */
    });
  }, []);
  useEffect(refresh, [refresh]);

  const run = useCallback(async (command: () => Promise<ProvidersView>) => {
    setView(await command());
  }, []);

  const current = useMemo(() => currentChoice(view), [view]);
  return { view, current, run, refresh };
}
