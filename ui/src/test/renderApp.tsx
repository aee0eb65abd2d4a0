import { expect } from 'vitest';
import { act, render, screen, waitFor } from '@testing-library/react';
import { App } from '../App';
import type { CommandName, ReplyEvent } from '../ipc';
import { Channel, commands } from './tauriMock';

/** Renders the app against the fake backend and waits for startup to settle. */
export async function renderApp() {
  const result = render(<App />);
  await waitFor(() => expect(screen.getByTestId('model-status').dataset.state).toBe('ready'));
  await screen.findAllByTestId('conversation-item');
  return result;
}

/** A streamed command held open: the test pushes events, then ends it. */
export function holdStream(command: CommandName) {
  const stream: { channel: Channel<ReplyEvent> | null; args: Record<string, unknown> | null; end: () => void } = {
    channel: null,
    args: null,
    end: () => {},
  };
  commands.set(command, (args) => {
    stream.args = args;
    stream.channel = args.channel as Channel<ReplyEvent>;
    return new Promise<null>((resolve) => (stream.end = () => resolve(null)));
  });
  return stream;
}

/** Sends a reply event as the backend would, inside act. */
export async function push(stream: { channel: Channel<ReplyEvent> | null }, event: ReplyEvent) {
  await waitFor(() => expect(stream.channel).not.toBeNull());
  await act(async () => stream.channel?.onmessage(event));
}
