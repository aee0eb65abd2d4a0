// The model side of the window: what is loaded or loading, and the models there are to pick.
import { useCallback, useEffect, useState } from 'react';
import { errorMessage, listModels, loadModel, modelState, onModelState, type ModelState, type ModelSummary } from '../ipc';

/** `starting`: the backend's state has not arrived yet (the window's first frame). */
export type ModelStatus = 'starting' | 'loading' | 'ready' | 'error' | 'none';

export interface Models {
  state: ModelState;
  status: ModelStatus;
  /** The chat models found (embedding models give vectors, not replies, and are left out). Null until listed. */
  models: ModelSummary[] | null;
  listError: string | null;
  refreshModels: () => void;
  load: (path: string) => void;
}

const nothing: ModelState = { loaded: null, draft: null, loading: null, error: null, revision: 0 };

/** The newer of two states: events and the snapshot can arrive out of order. */
function newer(previous: ModelState, next: ModelState): ModelState {
  return next.revision >= previous.revision ? next : previous;
}

export function modelStatus(state: ModelState): ModelStatus {
  if (state.loading) return 'loading';
  if (state.error) return 'error';
  if (state.loaded) return 'ready';
  return state.revision === 0 ? 'starting' : 'none';
}

export function useModel(): Models {
  const [state, setState] = useState<ModelState>(nothing);
  const [models, setModels] = useState<ModelSummary[] | null>(null);
  const [listError, setListError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    let unlisten: (() => void) | null = null;
    // Subscribed before the snapshot is asked for, so that no change falls between the two;
    // whichever of them arrives last, the newest revision wins.
    const snapshot = () =>
      modelState()
        .then((state) => live && setState((previous) => newer(previous, state)))
        .catch((e: unknown) => live && setState({ ...nothing, error: errorMessage(e) }));
    onModelState((next) => live && setState((previous) => newer(previous, next)))
      .then((stop) => (live ? (unlisten = stop) : stop()))
      .catch(() => {
        /* No event bridge outside Tauri. */
      })
      .finally(snapshot);
    return () => {
      live = false;
      unlisten?.();
    };
  }, []);

  const refreshModels = useCallback(() => {
    listModels().then(
      (list) => {
        setModels(list.filter((model) => !model.embedding));
        setListError(null);
      },
      (e: unknown) => {
        setModels([]);
        setListError(errorMessage(e));
      },
    );
  }, []);

  useEffect(refreshModels, [refreshModels]);

  const load = useCallback((path: string) => {
    // Show the load at once; the backend's events then carry the stages.
    setState((previous) => ({
      ...previous,
      loading: { path, name: path.split('/').pop() ?? path, stage: 'starting', fraction: 0 },
      error: null,
    }));
    loadModel(path).then(
      (loaded) =>
        setState((previous) => (previous.loading?.path === path ? { ...previous, loaded, loading: null, error: null } : previous)),
      (e: unknown) => setState((previous) => ({ ...previous, loading: null, error: errorMessage(e) })),
    );
  }, []);

  return { state, status: modelStatus(state), models, listError, refreshModels, load };
}
