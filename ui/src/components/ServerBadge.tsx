import type { ServerStatus } from '../ipc';

/** In the header while the local server is on: where it listens and how many requests run. */
export function ServerBadge({ status }: { status: ServerStatus | null }) {
  if (status?.error) {
    return (
      <span className="badge server-badge server-error" data-testid="server-badge" title={status.error}>
        Server off: port unavailable
      </span>
    );
  }
  if (!status?.address) return null;
  const port = status.address.match(/:(\d+)\//)?.[1] ?? '';
  const running = status.active_requests;
  return (
    <span className="badge accent server-badge" data-testid="server-badge" title={`OpenAI-compatible API at ${status.address}`}>
      Server :{port} · {running === 0 ? 'idle' : `${running} running`}
    </span>
  );
}
