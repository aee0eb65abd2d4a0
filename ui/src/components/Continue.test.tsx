import { beforeEach, describe, expect, it } from 'vitest';
import { cleanup, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { installBackend, message, view } from '../test/fixtures';
import { holdStream, push, renderApp } from '../test/renderApp';
import { commands, invoke } from '../test/tauriMock';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

async function openWith(messages: ReturnType<typeof view>[]) {
  commands.set('conversation_messages', () => messages);
  fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
  await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(messages.length));
}

describe('continue', () => {
  it('is offered on a stopped last reply and writes more into the same message', async () => {
    await renderApp();
    const stopped = message(2, 'assistant', 'Once upon', { status: 'stopped' });
    await openWith([view(message(1, 'user', 'Tell a story')), view(stopped)]);
    const stream = holdStream('continue_reply');
    fireEvent.click(screen.getByTestId('continue-button'));
    await waitFor(() => expect(stream.args?.reply).toBe(2));

    await push(stream, { kind: 'started', user: view(message(1, 'user', 'Tell a story')), reply: { ...stopped, status: 'streaming' } });
    expect(screen.queryByTestId('continue-button')).toBeNull();
    expect(screen.getByTestId('stop-button')).toBeTruthy();
    await push(stream, { kind: 'token', text: ' a time' });
    const continued = { ...stopped, content: 'Once upon a time', status: 'complete' as const };
    commands.set('conversation_messages', () => [view(message(1, 'user', 'Tell a story')), view(continued)]);
    await push(stream, { kind: 'done', reply: continued });
    const replies = screen.getAllByTestId('message').filter((m) => m.dataset.role === 'assistant');
    expect(replies).toHaveLength(1);
    expect(replies[0]?.dataset.id).toBe('2');
    expect(replies[0]?.textContent).toContain('Once upon a time');
    expect(screen.queryByTestId('continue-button')).toBeNull();
  });

  it('is offered for an interrupted reply, and not for a complete one or an earlier one', async () => {
    await renderApp();
    await openWith([
      view(message(1, 'user', 'Hi')),
      view(message(2, 'assistant', 'Hel', { status: 'interrupted', error: 'the app closed' })),
    ]);
    expect(screen.getAllByTestId('continue-button')).toHaveLength(1);
    cleanup();

    installBackend();
    await renderApp();
    await openWith([
      view(message(1, 'user', 'Hi')),
      view(message(2, 'assistant', 'Hel', { status: 'stopped' })),
      view(message(3, 'user', 'Go on')),
      view(message(4, 'assistant', 'Hello!')),
    ]);
    expect(screen.queryByTestId('continue-button')).toBeNull();
  });
});
