import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, render, screen, waitFor } from '@testing-library/react';
import { App } from '../App';
import { installBackend } from '../test/fixtures';
import { holdStream } from '../test/renderApp';
import { commands, emit, invoke } from '../test/tauriMock';
import { SUGGESTED_PROMPTS } from './Welcome';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

const loadingSmol = (fraction: number, revision: number) => ({
  loaded: null,
  loading: { path: '/models/SmolLM2-135M-Instruct.gguf', name: 'SmolLM2-135M-Instruct', stage: 'reading weights', fraction },
  error: null,
  revision,
});

describe('the first frame', () => {
  it('says the app is starting before the backend has answered, never that no model is loaded', async () => {
    commands.set('model_state', () => new Promise(() => {}));
    render(<App />);
    expect(screen.getByTestId('model-status').dataset.state).toBe('starting');
    expect(screen.getByTestId('model-picker').textContent).toContain('Starting…');
    expect(screen.queryByText(/No model loaded|Choose a model/)).toBeNull();
    expect(screen.getByTestId('send-button').getAttribute('title')).toBe('Starting…');
  });

  it('shows the default model loading from its first answer, with a bar that moves', async () => {
    commands.set('model_state', () => loadingSmol(0.05, 1));
    render(<App />);
    await waitFor(() => expect(screen.getByTestId('model-status').dataset.state).toBe('loading'));
    expect(screen.getByTestId('load-stage').textContent).toBe('Loading SmolLM2-135M-Instruct… reading weights');
    const bar = () => (screen.getByTestId('load-progress') as HTMLProgressElement).value;
    expect(bar()).toBeCloseTo(0.05);
    act(() => emit('model-state', loadingSmol(0.6, 2)));
    expect(bar()).toBeCloseTo(0.6);
    expect(screen.queryByText(/No model loaded|Choose a model/)).toBeNull();
  });
});

describe('the welcome', () => {
  it('greets a first run with suggested prompts that fill the message box', async () => {
    commands.set('list_conversations', () => ({ conversations: [], next: null }));
    render(<App />);
    const welcome = await screen.findByTestId('welcome');
    expect(welcome.textContent).toContain('Welcome to Confab');
    const suggestions = screen.getAllByTestId('suggested-prompt');
    expect(suggestions.map((s) => s.textContent)).toEqual(SUGGESTED_PROMPTS);
    await waitFor(() => expect(screen.getByTestId('model-status').dataset.state).toBe('ready'));
    fireEvent.click(suggestions[1]!);
    const input = screen.getByTestId('composer-input') as HTMLTextAreaElement;
    expect(input.value).toBe(SUGGESTED_PROMPTS[1]);
    expect(document.activeElement).toBe(input);
    // Enter sends it, as any message.
    const stream = holdStream('send_message');
    fireEvent.keyDown(input, { key: 'Enter' });
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: null, text: SUGGESTED_PROMPTS[1] }));
  });

  it('asks what is on your mind once there are chats', async () => {
    render(<App />);
    await screen.findAllByTestId('conversation-item');
    expect(screen.getByTestId('welcome').textContent).toContain("What's on your mind?");
    expect(screen.getAllByTestId('suggested-prompt')).toHaveLength(SUGGESTED_PROMPTS.length);
  });
});
