import { beforeEach, describe, expect, it } from 'vitest';
import { screen, waitFor } from '@testing-library/react';
import { installBackend } from '../test/fixtures';
import { push, renderApp, startReply } from '../test/renderApp';
import { invoke } from '../test/tauriMock';
import { queuedText } from './MessageBubble';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

describe('a reply that waits to start', () => {
  it('says what it waits for and how many wait before it', () => {
    expect(queuedText('memory', 0)).toBe(
      'Waiting for memory: the replies running now hold what Settings › Storage › Memory for replies allows…',
    );
    expect(queuedText('memory', 2)).toContain('(2 replies before it)…');
    expect(queuedText('row', 1)).toBe('Waiting for a free slot: other replies are running (1 reply before it)…');
  });

  it('shows it in place of "Writing…" until its plan comes', async () => {
    await renderApp();
    const { stream } = await startReply('A long story');
    await push(stream, { kind: 'queued', reason: 'memory', ahead: 1 });
    await waitFor(() => expect(screen.getByTestId('reply-status').textContent).toBe(queuedText('memory', 1)));
    await push(stream, { kind: 'token', text: 'Once' });
    await waitFor(() => expect(screen.getAllByTestId('message-content').at(-1)?.textContent).toBe('Once'));
    expect(screen.queryByTestId('reply-status')).toBeNull();
  });
});
