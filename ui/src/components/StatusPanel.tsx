import { useCallback, useEffect, useState } from 'react';
import { diagnostics, errorMessage, runtimeInfo, type RuntimeInfo } from '../ipc';
import { CopyButton } from './CopyButton';

type State = { kind: 'loading' } | { kind: 'ready'; info: RuntimeInfo } | { kind: 'error'; message: string };

/** About: the versions of Confab, MLX and the engine's backend, and the default model. */
export function StatusPanel() {
  const [state, setState] = useState<State>({ kind: 'loading' });

  const load = useCallback(() => {
    let live = true;
    setState({ kind: 'loading' });
    runtimeInfo().then(
      (info) => live && setState({ kind: 'ready', info }),
      (e: unknown) => live && setState({ kind: 'error', message: errorMessage(e) }),
    );
    return () => {
      live = false;
    };
  }, []);

  useEffect(load, [load]);

  return (
    <section className="status" aria-label="Runtime status">
      <h4>Versions</h4>
      {state.kind === 'loading' && <p className="muted">Checking the runtime…</p>}
      {state.kind === 'error' && (
        <div role="alert" className="error">
          <p>Could not read the runtime status: {state.message}</p>
          <button type="button" onClick={load}>
            Try again
          </button>
        </div>
      )}
      {state.kind === 'ready' && <Details info={state.info} />}
    </section>
  );
}

/** Versions first (what a bug report needs), then whether the default model is there and the log. */
function Details({ info }: { info: RuntimeInfo }) {
  const { mlx, default_model: model } = info;
  return (
    <dl>
      <dt>Confab</dt>
      <dd data-testid="app-version">{info.app_version}</dd>
      <dt>MLX</dt>
      <dd data-testid="mlx-version">{mlx.version}</dd>
      <dt>Engine backend</dt>
      <dd data-testid="engine-backend">
        {mlx.backend} <span className="muted">(runs on the {mlx.device})</span>
      </dd>
      <dt>Default model</dt>
      <dd>
        {model.name} {model.present ? <span className="ok">present</span> : <span className="warn">missing</span>}
      </dd>
      <dt>Log</dt>
      <dd>
        <div className="path" data-testid="log-file">
          {info.log_file}
        </div>
        <CopyButton text={diagnostics} label="Copy diagnostics" testId="copy-diagnostics" />
      </dd>
    </dl>
  );
}
