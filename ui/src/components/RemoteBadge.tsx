import type { RemoteModelChoice } from '../state/useProviders';

/** In the header while replies go to another machine: which provider, and where it is. */
export function RemoteBadge({ current }: { current: RemoteModelChoice | null }) {
  if (!current) return null;
  const { provider, model } = current;
  return (
    <span
      className="badge remote remote-badge"
      data-testid="remote-badge"
      title={`This chat's messages are sent to ${provider.base_url} (${model.id} on ${provider.name}), not kept on this computer only.`}
    >
      Remote: {provider.name}
    </span>
  );
}
