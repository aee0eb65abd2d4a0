import { beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { conversation, installBackend, settings, smolLoaded } from '../test/fixtures';
import type { Settings } from '../ipc';
import { holdStream, push, renderApp, startReply } from '../test/renderApp';
import { callsOf, commands, invoke } from '../test/tauriMock';
import { Reasoning, reasoningLabel } from './Reasoning';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

const section = () => screen.getByTestId('reasoning') as HTMLDetailsElement;

describe('Reasoning', () => {
  it('says the model is thinking, then how long it thought', () => {
    expect(reasoningLabel(true, null)).toBe('Thinking…');
    expect(reasoningLabel(false, 3200)).toBe('Thought for 3.2 s');
    expect(reasoningLabel(false, 450)).toBe('Thought for 450 ms');
    expect(reasoningLabel(false, null)).toBe('Thoughts');
  });

  it('is open while the model thinks, closes when it stops, and opens on a click', () => {
    const { rerender } = render(<Reasoning text="Let me see" ms={null} thinking />);
    expect(section().open).toBe(true);
    expect(screen.getByTestId('reasoning-toggle').textContent).toBe('Thinking…');
    rerender(<Reasoning text="Let me see. 2+2=4." ms={1500} thinking={false} />);
    expect(section().open).toBe(false);
    expect(screen.getByTestId('reasoning-toggle').textContent).toBe('Thought for 1.5 s');
    expect(screen.getByTestId('reasoning-text').textContent).toBe('Let me see. 2+2=4.');
    fireEvent.click(screen.getByTestId('reasoning-toggle'));
    expect(section().open).toBe(true);
  });

  it('shows model markup as the literal text it is', () => {
    const hostile = '<img src=x onerror="alert(1)"> <script>alert(2)</script> **not bold**';
    render(<Reasoning text={hostile} ms={10} thinking={false} />);
    const text = screen.getByTestId('reasoning-text');
    expect(text.textContent).toBe(hostile);
    expect(text.querySelector('img, script, strong')).toBeNull();
  });
});

describe('a thinking reply in the chat', () => {
  it('streams its reasoning apart from the answer, folds it when the answer starts, and keeps it', async () => {
    await renderApp();
    const { stream, reply } = await startReply('2+2?');
    await push(stream, { kind: 'reasoning', text: 'Two and two' });
    await waitFor(() => expect(screen.getByTestId('reasoning-text').textContent).toBe('Two and two'));
    expect(section().open).toBe(true);
    expect(screen.queryByText('Writing…')).toBeNull();
    await push(stream, { kind: 'reasoning', text: ' make four.' });
    await push(stream, { kind: 'thought', reasoning_ms: 2100 });
    await push(stream, { kind: 'token', text: 'Four.' });
    await waitFor(() => expect(screen.getAllByTestId('message-content').at(-1)?.textContent).toBe('Four.'));
    expect(screen.getByTestId('reasoning-text').textContent).toBe('Two and two make four.');
    expect(section().open).toBe(false);
    expect(screen.getByTestId('reasoning-toggle').textContent).toBe('Thought for 2.1 s');

    const saved = { ...reply, status: 'complete' as const, content: 'Four.', reasoning: 'Two and two make four.', reasoning_ms: 2100 };
    await push(stream, { kind: 'done', reply: saved });
    expect(screen.getByTestId('reasoning-toggle').textContent).toBe('Thought for 2.1 s');
    expect(screen.getAllByTestId('message-content').at(-1)?.textContent).toBe('Four.');
  });
});

describe('the thinking switch', () => {
  it('shows only for a model whose template has one', async () => {
    await renderApp();
    expect(screen.queryByTestId('thinking-switch')).toBeNull();
  });

  it('goes with a new chat and is kept per chat', async () => {
    commands.set('model_state', () => ({ loaded: { ...smolLoaded, thinking_switch: true }, loading: null, error: null, revision: 1 }));
    await renderApp();
    const toggle = () => screen.getByTestId('thinking-switch') as HTMLInputElement;
    expect(toggle().checked).toBe(true);
    fireEvent.click(toggle());
    expect(toggle().checked).toBe(false);
    const stream = holdStream('send_message');
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'quick one' } });
    fireEvent.click(screen.getByTestId('send-button'));
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: null, thinking: false }));

    commands.set('set_thinking', (args) => ({ ...conversation(1, 'First chat'), thinking: args.on as boolean }));
    commands.set('conversation_messages', () => []);
    fireEvent.click(within(screen.getAllByTestId('conversation-item').at(-1)!).getByText('First chat'));
    await waitFor(() => expect(toggle().checked).toBe(true));
    fireEvent.click(toggle());
    await waitFor(() => expect(callsOf('set_thinking')).toEqual([{ id: 1, on: false }]));
    await waitFor(() => expect(toggle().checked).toBe(false));
  });
});

describe('the reasoning effort', () => {
  it('shows only for a model whose template reads it', async () => {
    await renderApp();
    expect(screen.queryByTestId('reasoning-effort')).toBeNull();
  });

  it('is saved with the settings', async () => {
    commands.set('model_state', () => ({ loaded: { ...smolLoaded, reasoning_effort: true }, loading: null, error: null, revision: 1 }));
    commands.set('save_settings', (args) => args.settings as Settings);
    await renderApp();
    const select = () => screen.getByTestId('reasoning-effort') as HTMLSelectElement;
    await waitFor(() => expect(select().value).toBe(''));
    fireEvent.change(select(), { target: { value: 'high' } });
    await waitFor(() => expect(callsOf('save_settings')).toEqual([{ settings: { ...settings, reasoning_effort: 'high' } }]));
    await waitFor(() => expect(select().value).toBe('high'));
  });
});
