import { expect } from 'vitest';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { App } from '../App';
import type { CommandName, ReplyEvent } from '../ipc';
import { message, view } from './fixtures';
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

/** Opens the first chat (one message in it), sends `text` and starts its reply: the held
 *  stream and the streaming reply, for the test to push the reply's events. */
export async function startReply(text: string) {
  commands.set('conversation_messages', () => [view(message(1, 'user', 'Hi'))]);
  fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
  await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(1));
  const stream = holdStream('send_message');
  fireEvent.change(screen.getByTestId('composer-input'), { target: { value: text } });
  fireEvent.click(screen.getByTestId('send-button'));
  const reply = message(3, 'assistant', '', { status: 'streaming', parent_id: 2 });
  await push(stream, { kind: 'started', user: view(message(2, 'user', text)), reply });
  return { stream, reply };
}
