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

  it('says a reply cut by the token limit while thinking is cut, keeps its reasoning open, and continues it', async () => {
    await renderApp();
    const stats = {
      prompt_tokens: 10,
      cached_tokens: 0,
      generated_tokens: 12,
      time_to_first_token_ms: 5,
      decode_tokens_per_second: 100,
      model: 'qwen3',
      speculative: null,
      stop_reason: 'token_limit' as const,
    };
    const cut = message(2, 'assistant', '', { reasoning: 'Let me see', reasoning_ms: 2900, stats });
    await openWith([view(message(1, 'user', 'Why?')), view(cut)]);
    const badge = screen.getByTestId('status-badge');
    expect(badge.textContent).toContain('Cut at the token limit');
    expect(badge.dataset.cut).toBe('token_limit');
    expect((screen.getByTestId('reasoning') as HTMLDetailsElement).open).toBe(true);
    expect(screen.getByTestId('reasoning-text').textContent).toBe('Let me see');

    const stream = holdStream('continue_reply');
    fireEvent.click(screen.getByTestId('continue-button'));
    await waitFor(() => expect(stream.args?.reply).toBe(2));
    await push(stream, { kind: 'started', user: view(message(1, 'user', 'Why?')), reply: { ...cut, status: 'streaming' } });
    expect(screen.queryByTestId('status-badge')).toBeNull();
    await push(stream, { kind: 'reasoning', text: ' more' });
    const ended = { ...cut, reasoning: 'Let me see more', content: 'Because.', stats: { ...stats, stop_reason: 'end_of_turn' as const } };
    commands.set('conversation_messages', () => [view(message(1, 'user', 'Why?')), view(ended)]);
    await push(stream, { kind: 'done', reply: ended });
    expect(screen.queryByTestId('status-badge')).toBeNull();
    expect(screen.queryByTestId('continue-button')).toBeNull();
  });

  it('is not offered where the model ended the reply itself', async () => {
    await renderApp();
    const stats = {
      prompt_tokens: 10,
      cached_tokens: 0,
      generated_tokens: 3,
      time_to_first_token_ms: 5,
      decode_tokens_per_second: 100,
      model: 'm',
      speculative: null,
      stop_reason: 'end_of_turn' as const,
    };
    await openWith([view(message(1, 'user', 'Hi')), view(message(2, 'assistant', 'Hello!', { stats }))]);
    expect(screen.queryByTestId('continue-button')).toBeNull();
    expect(screen.queryByTestId('status-badge')).toBeNull();
  });
});
