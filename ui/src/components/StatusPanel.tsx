import { useCallback, useEffect, useState } from 'react';
import { diagnostics, errorMessage, runtimeInfo, type RuntimeInfo } from '../ipc';
import { CopyButton } from './CopyButton';

type State =
  | { kind: 'loading' }
  | { kind: 'ready'; info: RuntimeInfo }
  | { kind: 'error'; message: string };

/** A small report on the runtime: MLX, device, and the default model. */
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
      <h3>Runtime</h3>
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

function Details({ info }: { info: RuntimeInfo }) {
  const { mlx, default_model: model } = info;
  return (
    <dl>
      <dt>MLX</dt>
      <dd>
        {mlx.version} <span className="muted">({mlx.backend})</span>
      </dd>
      <dt>Device</dt>
      <dd>{mlx.device}</dd>
      <dt>Default model</dt>
      <dd>
        {model.name}{' '}
        {model.present ? (
          <span className="ok">present</span>
        ) : (
          <span className="warn">missing</span>
        )}
        <div className="path">{model.path || '—'}</div>
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
