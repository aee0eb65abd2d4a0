import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { contextUse, gemmaLoaded, imageAttachment, installBackend, message, view } from '../test/fixtures';
import { holdStream, push, renderApp } from '../test/renderApp';
import { callsOf, commands, emit, invoke } from '../test/tauriMock';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

const input = () => screen.getByTestId('composer-input') as HTMLTextAreaElement;

async function openFirstConversation() {
  commands.set('conversation_messages', () => [view(message(1, 'user', 'Hi')), view(message(2, 'assistant', 'Hello!'))]);
  fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
  await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(2));
}

describe('context meter', () => {
  it('shows the chat and the draft against the context, counted once typing pauses', async () => {
    await renderApp();
    await openFirstConversation();
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('40 / 8,192 tokens'));
    fireEvent.change(input(), { target: { value: 'a' } });
    fireEvent.change(input(), { target: { value: 'ab' } });
    fireEvent.change(input(), { target: { value: 'abcdefgh' } });
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('42 / 8,192 tokens'));
    // The keystrokes in between were not counted one by one.
    expect(callsOf('measure_context').map((args) => args.draft)).not.toContain('ab');
    expect(callsOf('measure_context').at(-1)).toEqual({ conversation: 1, draft: 'abcdefgh', attachments: [] });
    expect(screen.getByTestId('context-meter').dataset.verdict).toBe('fits');
    expect(screen.queryByTestId('context-warning')).toBeNull();
  });

  it('counts the files waiting in the composer with the draft, and again when one is removed', async () => {
    await renderApp();
    act(() => emit('model-state', { loaded: gemmaLoaded, loading: null, error: null, revision: 101 }));
    await openFirstConversation();
    commands.set('attach_bytes', () => imageAttachment);
    commands.set('measure_context', (args) => contextUse(40 + 256 * (args.attachments as string[]).length, (args.draft as string).length));
    fireEvent.change(screen.getByTestId('file-input'), {
      target: { files: [new File([new Uint8Array([1])], 'cat.png', { type: 'image/png' })] },
    });
    await screen.findByTestId('attachment-chip');
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('296 / 8,192 tokens'));
    expect(callsOf('measure_context').at(-1)?.attachments).toEqual([imageAttachment.hash]);
    fireEvent.click(screen.getByTestId('attachment-remove'));
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('40 / 8,192 tokens'));
  });

  it("hides when nothing counts (a provider's model is picked)", async () => {
    commands.set('measure_context', () => null);
    await renderApp();
    fireEvent.change(input(), { target: { value: 'hello' } });
    await waitFor(() => expect(callsOf('measure_context').at(-1)?.draft).toBe('hello'));
    expect(screen.queryByTestId('context-meter')).toBeNull();
  });

  it('flags a huge paste before sending, and does not send it', async () => {
    await renderApp();
    await openFirstConversation();
    const paste = 'x'.repeat(200_000);
    fireEvent.change(input(), { target: { value: paste } });
    const warning = await screen.findByTestId('context-warning');
    expect(warning.dataset.verdict).toBe('too-long');
    expect(warning.textContent).toContain('about 50,010 tokens');
    expect(warning.textContent).toContain('Shorten it');
    expect((screen.getByTestId('send-button') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.keyDown(input(), { key: 'Enter' });
    expect(callsOf('send_message')).toHaveLength(0);
    expect(input().value).toBe(paste);
  });

  it('checks a draft typed faster than the meter before sending it', async () => {
    await renderApp();
    await openFirstConversation();
    const paste = 'x'.repeat(200_000);
    fireEvent.change(input(), { target: { value: paste } });
    // Enter at once, before the meter's pause has passed.
    fireEvent.keyDown(input(), { key: 'Enter' });
    await screen.findByTestId('context-warning');
    expect(callsOf('send_message')).toHaveLength(0);
    expect(input().value).toBe(paste);
  });

  it('sends a short draft typed faster than the meter at once, without waiting for a count', async () => {
    await renderApp();
    await openFirstConversation();
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('40 / 8,192 tokens'));
    // A count that never answers: a send that waited for one would never go.
    commands.set('measure_context', () => new Promise(() => undefined));
    const counts = callsOf('measure_context').length;
    const stream = holdStream('send_message');
    fireEvent.change(input(), { target: { value: 'What is the capital of France?' } });
    fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: 1, text: 'What is the capital of France?' }));
    expect(callsOf('measure_context')).toHaveLength(counts);
  });

  it('counts nothing while a reply is written (the engine needs the CPU), then counts the chat again', async () => {
    await renderApp();
    await openFirstConversation();
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('40 / 8,192 tokens'));
    const stream = holdStream('send_message');
    fireEvent.change(input(), { target: { value: 'Tell me more' } });
    fireEvent.keyDown(input(), { key: 'Enter' });
    const reply = message(4, 'assistant', '', { status: 'streaming', parent_id: 3 });
    await push(stream, { kind: 'started', user: view(message(3, 'user', 'Tell me more', { parent_id: 2 })), reply });
    const counts = callsOf('measure_context').length;
    await act(() => new Promise((resolve) => setTimeout(resolve, 800)));
    expect(callsOf('measure_context')).toHaveLength(counts);
    // The last count stays shown meanwhile.
    expect(screen.getByTestId('context-meter').textContent).toBe('40 / 8,192 tokens');
    commands.set('measure_context', () => contextUse(60, 0));
    await push(stream, { kind: 'done', reply: { ...reply, content: 'Sure.', status: 'complete' } });
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('60 / 8,192 tokens'));
  });

  it('offers a new chat or leaving out old messages when the chat is too long for the draft', async () => {
    commands.set('measure_context', (args) =>
      args.conversation === null ? contextUse(0, (args.draft as string).length) : contextUse(7000, (args.draft as string).length),
    );
    await renderApp();
    await openFirstConversation();
    fireEvent.change(input(), { target: { value: 'y'.repeat(1000) } });
    const warning = await screen.findByTestId('context-warning');
    expect(warning.dataset.verdict).toBe('drops-turns');
    expect(warning.textContent).toContain('about 7,250 tokens');
    // Enter does not send past the warning; the choices do.
    fireEvent.keyDown(input(), { key: 'Enter' });
    expect(callsOf('send_message')).toHaveLength(0);

    // A new chat: the draft comes along and fits there.
    fireEvent.click(screen.getByTestId('context-new-chat'));
    await waitFor(() => expect(callsOf('measure_context').at(-1)?.conversation).toBeNull());
    await waitFor(() => expect(screen.getByTestId('context-meter').textContent).toBe('250 / 8,192 tokens'));
    expect(screen.queryByTestId('context-warning')).toBeNull();
    expect(input().value).toBe('y'.repeat(1000));
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
  });

  it('sends anyway when asked, leaving the oldest messages to the engine', async () => {
    commands.set('measure_context', (args) => contextUse(7000, (args.draft as string).length));
    await renderApp();
    await openFirstConversation();
    fireEvent.change(input(), { target: { value: 'z'.repeat(1000) } });
    await screen.findByTestId('context-warning');
    const stream = holdStream('send_message');
    fireEvent.click(screen.getByTestId('context-send-anyway'));
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: 1, text: 'z'.repeat(1000) }));
    expect(input().value).toBe('');
  });
});
