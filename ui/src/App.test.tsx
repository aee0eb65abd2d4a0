import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { App } from './App';
import {
  conversation,
  gemmaLoaded,
  imageAttachment,
  installBackend,
  message,
  models,
  settings,
  settingsChoices,
  smolLoaded,
  view,
} from './test/fixtures';
import { holdStream, push, renderApp } from './test/renderApp';
import { callsOf, commands, dragDropHandler, emit, invoke, lastArgs } from './test/tauriMock';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

const input = () => screen.getByTestId('composer-input') as HTMLTextAreaElement;

async function openFirstConversation(messages = [view(message(1, 'user', 'Hi')), view(message(2, 'assistant', 'Hello!'))]) {
  commands.set('conversation_messages', () => messages);
  fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
  await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(messages.length));
}

describe('composer', () => {
  it('sends on Enter and adds a line on Shift+Enter', async () => {
    await renderApp();
    await openFirstConversation();
    const stream = holdStream('send_message');
    fireEvent.change(input(), { target: { value: 'line one' } });
    fireEvent.keyDown(input(), { key: 'Enter', shiftKey: true });
    expect(callsOf('send_message')).toHaveLength(0);
    fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: 1, text: 'line one', attachments: [] }));
    expect(input().value).toBe('');
  });

  it('draws the message at once, and the backend makes the new chat with it', async () => {
    await renderApp();
    const stream = holdStream('send_message');
    fireEvent.change(input(), { target: { value: 'hello' } });
    fireEvent.click(screen.getByTestId('send-button'));
    await waitFor(() => expect(stream.args).toMatchObject({ conversation: null, text: 'hello' }));
    // Before anything is saved: the message and an empty reply, in one frame with the cleared box.
    const [shown, writing] = screen.getAllByTestId('message');
    expect(shown?.textContent).toContain('hello');
    expect(writing?.dataset.status).toBe('streaming');
    expect(input().value).toBe('');
    const userNode = shown!;
    act(() => emit('conversation-updated', conversation(5, 'hello')));
    const user = message(7, 'user', 'hello', { conversation_id: 5 });
    await push(stream, {
      kind: 'started',
      user: view(user),
      reply: message(8, 'assistant', '', { conversation_id: 5, status: 'streaming', parent_id: 7 }),
    });
    expect(screen.getAllByTestId('conversation-item')[0]?.dataset.id).toBe('5');
    expect(screen.getAllByTestId('conversation-item')[0]?.className).toContain('selected');
    // The saved message takes the place of the one drawn at Enter: the same element.
    const bubbles = screen.getAllByTestId('message');
    expect(bubbles.map((b) => b.dataset.id)).toEqual(['7', '8']);
    expect(bubbles[0]).toBe(userNode);
  });

  it('takes the drawn message back into the box when sending fails', async () => {
    await renderApp();
    commands.set('send_message', () => Promise.reject(new Error('No model is loaded.')));
    fireEvent.change(input(), { target: { value: 'hello' } });
    fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(input().value).toBe('hello'));
    expect(screen.queryAllByTestId('message')).toHaveLength(0);
  });

  it('keeps pasted HTML as text', async () => {
    await renderApp();
    await openFirstConversation();
    const pasted = '<img src=x onerror=alert(1)><b>bold</b>';
    fireEvent.paste(input(), { clipboardData: { files: [], getData: () => pasted } });
    fireEvent.change(input(), { target: { value: pasted } });
    const stream = holdStream('send_message');
    fireEvent.keyDown(input(), { key: 'Enter' });
    await waitFor(() => expect(stream.args?.text).toBe(pasted));
    const user = message(3, 'user', pasted, { parent_id: 2 });
    await push(stream, { kind: 'started', user: view(user), reply: message(4, 'assistant', '', { status: 'streaming', parent_id: 3 }) });
    const bubble = screen.getAllByTestId('message').find((m) => m.dataset.id === '3');
    expect(bubble?.querySelector('[data-testid="message-content"]')?.textContent).toBe(pasted);
    expect(bubble?.querySelector('img, b')).toBeNull();
  });

  it('attaches picked files and removes a chip', async () => {
    await renderApp();
    commands.set('attach_bytes', () => imageAttachment);
    const file = new File([new Uint8Array([1, 2])], 'cat.png', { type: 'image/png' });
    // SmolLM2 reads text only: the picker refuses the image with a notice...
    fireEvent.change(screen.getByTestId('file-input'), { target: { files: [file] } });
    expect((await screen.findByTestId('notice')).textContent).toContain('SmolLM2 reads text only');
    // ...and takes it once a vision model is loaded.
    act(() => emit('model-state', { loaded: gemmaLoaded, loading: null, error: null, revision: 101 }));
    fireEvent.change(screen.getByTestId('file-input'), { target: { files: [file] } });
    await screen.findByTestId('attachment-chip');
    expect(lastArgs('attach_bytes')).toMatchObject({ name: 'cat.png', bytes: [1, 2] });
    fireEvent.click(screen.getByTestId('attachment-remove'));
    expect(screen.queryByTestId('attachment-chip')).toBeNull();
  });

  it('names a model with vision when an image is dropped on a text-only one', async () => {
    await renderApp();
    fireEvent.change(input(), { target: { value: 'keep me' } });
    await act(async () => dragDropHandler?.({ payload: { type: 'drop', paths: ['/photos/cat.jpg'], position: { x: 0, y: 0 } } }));
    const notice = await screen.findByTestId('notice');
    expect(notice.textContent).toContain('SmolLM2 reads text only. Load a model with vision, such as Gemma 4, to ask about images.');
    // The file was checked first (a damaged one would say so), then turned away: no chip.
    expect(callsOf('attach_paths')).toHaveLength(1);
    expect(screen.queryByTestId('attachment-chip')).toBeNull();
    expect(input().value).toBe('keep me');
  });

  it('says a dropped image is damaged even when the model reads text only', async () => {
    await renderApp();
    commands.set('attach_paths', () => {
      throw 'broken.png: the file is damaged or incomplete';
    });
    await act(async () => dragDropHandler?.({ payload: { type: 'drop', paths: ['/photos/broken.png'], position: { x: 0, y: 0 } } }));
    expect((await screen.findByTestId('error-banner')).textContent).toContain('broken.png: the file is damaged');
    expect(screen.queryByTestId('notice')).toBeNull();
  });

  it('shows why an attachment was refused and keeps the text', async () => {
    await renderApp();
    act(() => emit('model-state', { loaded: gemmaLoaded, loading: null, error: null, revision: 102 }));
    commands.set('attach_paths', () => {
      throw 'cat.png is not a readable image';
    });
    fireEvent.change(input(), { target: { value: 'keep me' } });
    await act(async () => dragDropHandler?.({ payload: { type: 'drop', paths: ['/photos/cat.png'], position: { x: 0, y: 0 } } }));
    expect((await screen.findByTestId('error-banner')).textContent).toContain('cat.png is not a readable image');
    expect(lastArgs('attach_paths')).toEqual({ paths: ['/photos/cat.png'] });
    expect(input().value).toBe('keep me');
  });
});

describe('streaming', () => {
  /** `text` sent in the first conversation, whose reply (id 4) the backend has started; the
   *  stream is held open. `beforeStarted` runs between Enter and the reply's start. */
  async function sendAndStart(text: string, beforeStarted?: () => void) {
    await renderApp();
    await openFirstConversation();
    const stream = holdStream('send_message');
    fireEvent.change(input(), { target: { value: text } });
    fireEvent.keyDown(input(), { key: 'Enter' });
    beforeStarted?.();
    const reply = message(4, 'assistant', '', { status: 'streaming', parent_id: 3 });
    await push(stream, { kind: 'started', user: view(message(3, 'user', text, { parent_id: 2 })), reply });
    return { stream, reply };
  }

  it('keeps the title the backend sent when the reply starts', async () => {
    await sendAndStart('Tell me', () => act(() => emit('conversation-updated', conversation(1, 'Tell me'))));
    await waitFor(() => expect(screen.getAllByTestId('conversation-title')[0]?.textContent).toBe('Tell me'));
  });

  it('draws text that comes while the first token is drawn only once that draw is timed', async () => {
    const { stream } = await sendAndStart('Tell me');
    await push(stream, { kind: 'token', text: 'One' });
    await push(stream, { kind: 'token', text: ' two' });
    const text = () => screen.getAllByTestId('message').find((m) => m.dataset.id === '4')?.textContent ?? '';
    await waitFor(() => expect(text()).toContain('One'));
    // Its cost is known two frames later, and the next draw waits at least a tenth of a second
    // (drawInterval): a short reply costs the engine one draw while it decodes, not one a frame.
    expect(text()).not.toContain('One two');
    await waitFor(() => expect(text()).toContain('One two'));
  });

  it('streams tokens into the reply, shows the plan, and stops', async () => {
    const { stream, reply } = await sendAndStart('Tell me');
    await push(stream, {
      kind: 'plan',
      plan: {
        method: 'autoregressive',
        batching_declined: null,
        prompt_tokens: 300,
        reused_tokens: 120,
        reuse_source: 'memory',
        reuse_declined: null,
        resumed_from_checkpoint: null,
        checkpoints: 0,
        chunk_size: 512,
        chunks: 1,
        media: [],
        tower_runs: 0,
        dropped_messages: 0,
        constraint: null,
        grammar_jump: false,
        grammar_jump_declined: null,
        speculative: null,
        speculative_declined: null,
        kv_bits: null,
        kv_group_size: null,
        kv_quantization_declined: null,
      },
    });
    await push(stream, { kind: 'token', text: 'Once ' });
    await push(stream, { kind: 'token', text: 'upon' });
    const streaming = () => screen.getAllByTestId('message').find((m) => m.dataset.id === '4');
    await waitFor(() => expect(streaming()?.textContent).toContain('Once upon'));
    expect(streaming()?.dataset.status).toBe('streaming');
    // The plan is drawn with the finished reply, not while the engine computes.
    expect(screen.queryByTestId('plan')).toBeNull();

    fireEvent.click(screen.getByTestId('stop-button'));
    await waitFor(() => expect(lastArgs('stop_reply')).toEqual({ conversation: 1 }));
    // Esc stops too.
    fireEvent.keyDown(document, { key: 'Escape' });
    expect(callsOf('stop_reply')).toHaveLength(2);

    const stats = {
      prompt_tokens: 300,
      cached_tokens: 120,
      generated_tokens: 2,
      time_to_first_token_ms: 180,
      decode_tokens_per_second: 31.25,
      model: 'SmolLM2',
      speculative: null,
    };
    await push(stream, { kind: 'done', reply: { ...reply, content: 'Once upon', status: 'stopped', stats } });
    await act(async () => stream.end());
    expect(streaming()?.dataset.status).toBe('stopped');
    expect(streaming()?.textContent).toContain('Stopped');
    expect(screen.getByTestId('reply-stats').textContent).toBe(
      '2 tokens · 31.3 tok/s · 180 ms to first token · 120 of 300 prompt tokens cached',
    );
    expect(screen.getByTestId('plan').textContent).toBe('reused 120 of 300 prompt tokens from memory');
    expect(screen.getByTestId('plan').closest('details')?.open, 'the plan is folded away').toBe(false);
    expect(screen.getByTestId('send-button')).toBeTruthy();
  });

  it('keeps the reply and shows the error when generation fails', async () => {
    const { stream, reply } = await sendAndStart('Go');
    await push(stream, {
      kind: 'error',
      message: 'out of memory',
      reply: { ...reply, content: 'Par', status: 'error', error: 'out of memory' },
    });
    const failed = screen.getAllByTestId('message').find((m) => m.dataset.id === '4');
    expect(failed?.dataset.status).toBe('error');
    expect(failed?.textContent).toContain('Par');
    expect(failed?.textContent).toContain('out of memory');
  });

  it('puts the text back and shows a banner when nothing could be saved', async () => {
    await renderApp();
    await openFirstConversation();
    commands.set('send_message', () => {
      throw 'no model loaded';
    });
    fireEvent.change(input(), { target: { value: 'Lost?' } });
    fireEvent.keyDown(input(), { key: 'Enter' });
    expect((await screen.findByTestId('error-banner')).textContent).toContain('no model loaded');
    expect(input().value).toBe('Lost?');
  });
});

describe('message actions', () => {
  it('regenerates a reply and edits a user message', async () => {
    await renderApp();
    await openFirstConversation();
    const regen = holdStream('regenerate');
    commands.set('conversation_messages', () => [
      view(message(1, 'user', 'Hi')),
      view(message(5, 'assistant', 'Hey', { parent_id: 1 }), [2, 5]),
    ]);
    fireEvent.click(screen.getByTestId('regenerate-button'));
    await waitFor(() => expect(regen.args).toMatchObject({ reply: 2 }));
    const reply = message(5, 'assistant', '', { status: 'streaming', parent_id: 1 });
    await push(regen, { kind: 'started', user: view(message(1, 'user', 'Hi')), reply });
    expect(screen.getAllByTestId('message').map((m) => m.dataset.id)).toEqual(['1', '5']);
    await push(regen, { kind: 'done', reply: { ...reply, content: 'Hey' } });
    await act(async () => regen.end());
    await waitFor(() => expect(screen.getByTestId('sibling-position').textContent).toBe('2/2'));

    const edit = holdStream('edit_message');
    fireEvent.click(screen.getByTestId('edit-button'));
    fireEvent.change(screen.getByTestId('edit-input'), { target: { value: 'Hi there' } });
    fireEvent.click(screen.getByTestId('edit-save'));
    await waitFor(() => expect(edit.args).toMatchObject({ message: 1, text: 'Hi there' }));
  });

  it('switches between siblings', async () => {
    await renderApp();
    await openFirstConversation([view(message(1, 'user', 'Hi')), view(message(3, 'assistant', 'Second', { parent_id: 1 }), [2, 3, 4])]);
    expect(screen.getByTestId('sibling-position').textContent).toBe('2/3');
    commands.set('select_branch', () => [
      view(message(1, 'user', 'Hi')),
      view(message(2, 'assistant', 'First', { parent_id: 1 }), [2, 3, 4]),
    ]);
    fireEvent.click(screen.getByTestId('sibling-prev'));
    await waitFor(() => expect(screen.getByTestId('sibling-position').textContent).toBe('1/3'));
    expect(lastArgs('select_branch')).toEqual({ message: 2 });
    expect((screen.getByTestId('sibling-prev') as HTMLButtonElement).disabled).toBe(true);
    fireEvent.click(screen.getByTestId('sibling-next'));
    expect(lastArgs('select_branch')).toEqual({ message: 3 });
  });
});

describe('sidebar', () => {
  it('renders search snippets as text with highlights and opens the hit', async () => {
    await renderApp();
    commands.set('search_messages', () => [
      {
        conversation_id: 1,
        conversation_title: 'First chat',
        message_id: 2,
        role: 'assistant',
        created_at: 1,
        snippet: [
          { text: 'before <b>x</b> ', highlight: false },
          { text: '<img src=x onerror=alert(1)>', highlight: true },
        ],
      },
    ]);
    fireEvent.change(screen.getByTestId('search-input'), { target: { value: 'img' } });
    const hit = await screen.findByTestId('search-result', {}, { timeout: 2000 });
    expect(lastArgs('search_messages')).toEqual({ query: 'img' });
    expect(hit.querySelector('mark')?.textContent).toBe('<img src=x onerror=alert(1)>');
    expect(hit.querySelector('img, b')).toBeNull();
    commands.set('conversation_messages', () => [view(message(1, 'user', 'Hi')), view(message(2, 'assistant', 'Hello!'))]);
    fireEvent.click(hit);
    await waitFor(() => expect(screen.getAllByTestId('message')).toHaveLength(2));
  });

  it('renames inline, deletes after confirming, and takes background titles', async () => {
    await renderApp();
    commands.set('rename_conversation', (args) => args.title);
    commands.set('delete_conversation', () => null);
    fireEvent.click(screen.getByTestId('rename-button'));
    const rename = screen.getByTestId('rename-input');
    fireEvent.change(rename, { target: { value: 'Holiday' } });
    fireEvent.keyDown(rename, { key: 'Enter' });
    await waitFor(() => expect(screen.getByTestId('conversation-title').textContent).toBe('Holiday'));
    expect(lastArgs('rename_conversation')).toEqual({ id: 1, title: 'Holiday' });

    act(() => emit('conversation-updated', conversation(1, 'Auto title')));
    expect(screen.getByTestId('conversation-title').textContent).toBe('Auto title');

    fireEvent.click(screen.getByTestId('delete-button'));
    expect(callsOf('delete_conversation')).toHaveLength(0);
    fireEvent.click(screen.getByTestId('delete-button'));
    await waitFor(() => expect(screen.queryByTestId('conversation-item')).toBeNull());
    expect(lastArgs('delete_conversation')).toEqual({ id: 1 });
  });

  it('shows the title as stored, and says why an empty one is refused', async () => {
    await renderApp();
    commands.set('rename_conversation', (args) => {
      if (!args.title) throw 'A chat needs a title: type one, or press Esc to keep the old one.';
      return `${String(args.title).slice(0, 9)}…`;
    });
    const renameTo = (value: string) => {
      fireEvent.click(screen.getByTestId('rename-button'));
      const box = screen.getByTestId('rename-input');
      fireEvent.change(box, { target: { value } });
      fireEvent.keyDown(box, { key: 'Enter' });
    };
    renameTo('A very long title indeed');
    await waitFor(() => expect(screen.getByTestId('conversation-title').textContent).toBe('A very lo…'));
    renameTo('   ');
    expect((await screen.findByTestId('error-banner')).textContent).toContain('A chat needs a title');
    expect(screen.getByTestId('conversation-title').textContent).toBe('A very lo…');
  });

  it('keeps a chat open, with the error, when it cannot be deleted', async () => {
    await renderApp();
    await openFirstConversation();
    commands.set('delete_conversation', () => {
      throw "This chat's reply did not stop in time; try deleting it again in a moment.";
    });
    fireEvent.click(screen.getByTestId('delete-button'));
    fireEvent.click(screen.getByTestId('delete-button'));
    expect((await screen.findByTestId('error-banner')).textContent).toContain('did not stop in time');
    expect(screen.getAllByTestId('message')).toHaveLength(2);
    expect(screen.getAllByTestId('conversation-item')).toHaveLength(1);
  });

  it('pages with a cursor', async () => {
    commands.set('list_conversations', (args) =>
      args.cursor === null
        ? { conversations: [conversation(3), conversation(2)], next: { updated_at: 2, id: 2 } }
        : { conversations: [conversation(1)], next: null },
    );
    await renderApp();
    fireEvent.click(screen.getByTestId('load-more'));
    await waitFor(() => expect(screen.getAllByTestId('conversation-item')).toHaveLength(3));
    expect(lastArgs('list_conversations')).toEqual({ cursor: { updated_at: 2, id: 2 }, limit: 200 });
    expect(screen.queryByTestId('load-more')).toBeNull();
  });
});

describe('models', () => {
  it('lists models, disables unsupported ones, and shows load progress', async () => {
    await renderApp();
    commands.set('load_model', () => new Promise(() => {}));
    fireEvent.click(screen.getByTestId('model-picker'));
    const items = await screen.findAllByTestId('model-item');
    expect(items.map((i) => i.dataset.path)).toEqual(['/models/smol.gguf', '/models/gemma4', '/models/mamba']);
    expect((items[2] as HTMLButtonElement).disabled).toBe(true);
    expect(items[2]?.textContent).toContain("mamba architecture isn't supported");
    expect(items[1]?.textContent).toContain('vision');
    fireEvent.click(items[1]!);
    expect(lastArgs('load_model')).toEqual({ path: '/models/gemma4' });
    act(() =>
      emit('model-state', {
        loaded: null,
        loading: { path: '/models/gemma4', name: 'gemma4', stage: 'Reading weights', fraction: 0.4 },
        error: null,
        revision: 103,
      }),
    );
    expect(screen.getByTestId('model-status').dataset.state).toBe('loading');
    expect((screen.getByTestId('load-progress') as HTMLProgressElement).value).toBeCloseTo(0.4);
    expect((screen.getByTestId('send-button') as HTMLButtonElement).disabled).toBe(true);
    expect(screen.getByTestId('send-button').textContent).toBe('Loading model…');
    act(() => emit('model-state', { loaded: null, loading: null, error: 'bad weights', revision: 104 }));
    expect(screen.getByTestId('model-status').dataset.state).toBe('error');
    expect(screen.getByTestId('model-status').textContent).toContain('bad weights');
  });

  it('shows what people choose a model by, and unloads, shows its folder and gets more', async () => {
    await renderApp();
    commands.set('unload_model', () => undefined);
    commands.set('show_in_folder', () => undefined);
    fireEvent.click(screen.getByTestId('model-picker'));
    const rows = await screen.findAllByTestId('model-row');
    const smol = within(rows[0]!);
    expect(smol.getByTestId('model-facts').textContent).toBe('llama · 135M parameters · Q8_0 · 138 MB on disk · GGUF · 8K context');
    expect(smol.getByTestId('model-memory').textContent).toBe("needs about 238 MB of this machine's 24.0 GB");
    const gemma = within(rows[1]!);
    expect(gemma.getByTestId('model-facts').textContent).toContain('4.3B parameters · 4-bit');
    expect(gemma.getByTestId('model-memory').textContent).toBe('may not fit: needs about 30.0 GB, this machine has 24.0 GB');
    expect(gemma.getByText('vision')).toBeTruthy();
    expect(gemma.getByText('audio')).toBeTruthy();
    // Only the loaded model can be unloaded; every one can be shown in its folder.
    expect(gemma.queryByTestId('unload-model')).toBeNull();
    fireEvent.click(gemma.getByTestId('show-model-folder'));
    expect(lastArgs('show_in_folder')).toEqual({ path: '/models/gemma4' });
    fireEvent.click(smol.getByTestId('unload-model'));
    expect(callsOf('unload_model')).toHaveLength(1);
    expect(screen.queryByTestId('model-row')).toBeNull();
    fireEvent.click(screen.getByTestId('model-picker'));
    fireEvent.click(await screen.findByTestId('get-more-models'));
    expect(await screen.findByTestId('get-models')).toBeTruthy();
  });

  it('leaves embedding models out of the chat picker', async () => {
    const embedder = { ...models[1]!, name: 'Qwen3-Embedding-0.6B', path: '/models/qwen3-embedding', embedding: true };
    commands.set('list_models', () => [...models, embedder]);
    await renderApp();
    fireEvent.click(screen.getByTestId('model-picker'));
    const items = await screen.findAllByTestId('model-item');
    expect(items.map((i) => i.dataset.path)).toEqual(['/models/smol.gguf', '/models/gemma4', '/models/mamba']);
  });

  it("marks a model from Ollama's store", async () => {
    const ollama = { ...models[0]!, name: 'smollm2:135m', path: '/ollama/blobs/sha256-5a5a', source: 'Ollama' as const };
    commands.set('list_models', () => [ollama, ...models]);
    await renderApp();
    fireEvent.click(screen.getByTestId('model-picker'));
    const rows = await screen.findAllByTestId('model-row');
    expect(within(rows[0]!).getByTestId('model-item').textContent).toMatch(/^smollm2:135mOllama/);
    expect(within(rows[1]!).queryByTestId('model-source')).toBeNull();
  });

  it('keeps the newest model state when the snapshot arrives after a newer event', async () => {
    // The snapshot was taken mid-load, but the "loaded" event overtakes it.
    let answer: (state: unknown) => void = () => {};
    commands.set('model_state', () => new Promise((resolve) => (answer = resolve)));
    render(<App />);
    await waitFor(() => expect(callsOf('model_state').length).toBe(1));
    act(() => emit('model-state', { loaded: gemmaLoaded, loading: null, error: null, revision: 7 }));
    await act(async () =>
      answer({ loaded: null, loading: { path: '/models/gemma4', name: 'gemma4', stage: 'ready', fraction: 1 }, error: null, revision: 6 }),
    );
    expect(screen.getByTestId('model-status').dataset.state).toBe('ready');
  });
});

describe('settings and theme', () => {
  it("chooses the loaded model's keys/values precision, kept per model path", async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    await screen.findByTestId('settings-pane');
    const select = (await screen.findByTestId('setting-kv_bits')) as HTMLSelectElement;
    expect(select.value).toBe('');
    expect(select.closest('label')?.textContent).toContain('Keys and values of SmolLM2');
    fireEvent.change(select, { target: { value: '8' } });
    commands.set('save_settings', (args) => args.settings);
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    const saved = { ...settings, model_kv_bits: { [smolLoaded.path]: 8, '/models/other': 4 } };
    expect(lastArgs('save_settings')).toEqual({ settings: { ...settings, model_kv_bits: { [smolLoaded.path]: 8 } } });

    // Reopened: the saved choice shows; a model that keeps full precision says why; Full
    // precision removes this model's entry and leaves the others'.
    commands.set('get_settings', () => saved);
    act(() =>
      emit('model-state', {
        loaded: { ...smolLoaded, kv_quantization_declined: 'its recurrent layers keep their own state' },
        loading: null,
        error: null,
        revision: 50,
      }),
    );
    fireEvent.click(screen.getByTestId('settings-button'));
    await waitFor(() => expect((screen.getByTestId('setting-kv_bits') as HTMLSelectElement).value).toBe('8'));
    expect(screen.getByTestId('setting-kv_bits').closest('label')?.textContent).toContain(
      'Kept in full precision: its recurrent layers keep their own state',
    );
    // The header says what the loaded model holds.
    act(() =>
      emit('model-state', {
        loaded: { ...smolLoaded, kv_quantization: { bits: 8, group_size: 64 } },
        loading: null,
        error: null,
        revision: 51,
      }),
    );
    await waitFor(() => expect(document.body.textContent).toContain('8-bit keys/values'));
    fireEvent.change(screen.getByTestId('setting-kv_bits'), { target: { value: '' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    expect(lastArgs('save_settings')).toEqual({ settings: { ...saved, model_kv_bits: { '/models/other': 4 } } });
  });

  it('applies the saved theme, previews a change, saves, and shows validation errors', async () => {
    await renderApp();
    await waitFor(() => expect(document.documentElement.dataset.theme).toBe('light'));
    fireEvent.click(screen.getByTestId('settings-button'));
    const pane = await screen.findByTestId('settings-pane');
    await waitFor(() => expect((screen.getByTestId('setting-temperature') as HTMLInputElement).value).toBe('0.7'));
    expect((screen.getByTestId('setting-seed') as HTMLInputElement).value).toBe('');

    fireEvent.change(screen.getByTestId('setting-theme'), { target: { value: 'dark' } });
    expect(document.documentElement.dataset.theme).toBe('dark');

    commands.set('save_settings', () => {
      throw 'temperature must be between 0 and 2';
    });
    fireEvent.change(screen.getByTestId('setting-temperature'), { target: { value: '5' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    expect((await within(pane).findByTestId('error-banner')).textContent).toContain('temperature must be between 0 and 2');

    commands.set('save_settings', (args) => args.settings);
    fireEvent.change(screen.getByTestId('setting-temperature'), { target: { value: '0.2' } });
    fireEvent.change(screen.getByTestId('setting-seed'), { target: { value: '42' } });
    fireEvent.change(screen.getByTestId('setting-reply_memory_percent'), { target: { value: '80' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    expect(lastArgs('save_settings')).toEqual({
      settings: { ...settings, temperature: 0.2, seed: 42, theme: 'dark', reply_memory_percent: 80 },
    });
    expect(document.documentElement.dataset.theme).toBe('dark');
  });

  it('groups the pane, applies a preset, and resets to the defaults keeping the model folders', async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const pane = await screen.findByTestId('settings-pane');
    const headings = [...pane.querySelectorAll('section[id] > h3')].map((h) => h.textContent);
    expect(headings).toEqual(['Chat', 'Model', 'Appearance', 'Storage', 'Tools', 'Advanced']);
    const precise = await screen.findByTestId('preset-precise');
    expect(precise.getAttribute('aria-pressed')).toBe('false');
    fireEvent.click(precise);
    expect((screen.getByTestId('setting-temperature') as HTMLInputElement).value).toBe('0.1');
    expect((screen.getByTestId('setting-top_k') as HTMLInputElement).value).toBe('20');
    expect(precise.getAttribute('aria-pressed')).toBe('true');
    expect((screen.getByTestId('setting-max_tokens') as HTMLInputElement).value).toBe('1024');

    fireEvent.click(screen.getByTestId('settings-reset'));
    expect(screen.getByTestId('preset-model').getAttribute('aria-pressed')).toBe('true');
    expect(screen.getByTestId('preset-balanced').getAttribute('aria-pressed')).toBe('false');
    expect((screen.getByTestId('setting-temperature') as HTMLInputElement).value).toBe('');
    expect((screen.getByTestId('setting-temperature') as HTMLInputElement).placeholder).toBe("Model's");
    expect((screen.getByTestId('setting-system_prompt') as HTMLTextAreaElement).value).toBe('');
    expect((screen.getByTestId('setting-max_tokens') as HTMLInputElement).value).toBe('2048');
    commands.set('save_settings', (args) => args.settings);
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    const saved = lastArgs('save_settings')?.settings as typeof settings;
    expect(saved).toEqual({ ...settingsChoices.defaults, model_folders: settings.model_folders });
  });

  it('adds a model folder picked by browsing, and Esc closes only the picker', async () => {
    const listings: Record<string, unknown> = {
      '/home/me': {
        path: '/home/me',
        parent: '/home',
        folders: [
          { name: 'Documents', path: '/home/me/Documents', has_model: false },
          { name: 'llms', path: '/home/me/llms', has_model: true },
        ],
        models_inside: 0,
      },
      '/home/me/llms': { path: '/home/me/llms', parent: '/home/me', folders: [], models_inside: 2 },
    };
    commands.set('list_folder', (args) => {
      const listing = listings[(args.path as string | null) ?? '/home/me'];
      if (!listing) throw 'Cannot open /nowhere: No such file or directory (os error 2).';
      return listing;
    });
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    await screen.findByTestId('settings-pane');
    fireEvent.click(screen.getByTestId('setting-model_folder_browse'));
    const picker = await screen.findByTestId('folder-picker');
    await waitFor(() => expect(screen.getByTestId('folder-picker-path').textContent).toBe('/home/me'));
    const entries = within(picker).getAllByTestId('folder-picker-entry');
    expect(entries.map((e) => e.textContent)).toEqual(['Documents', 'llmsmodels']);
    // The list has the keyboard, so a folder opens with Enter.
    expect(document.activeElement).toBe(entries[0]);
    fireEvent.click(entries[1]!);
    await waitFor(() => expect(screen.getByTestId('folder-picker-path').textContent).toBe('/home/me/llms'));
    expect(screen.getByTestId('folder-picker-models').textContent).toContain('2 models directly in this folder');
    fireEvent.click(screen.getByTestId('folder-picker-choose'));
    expect(screen.queryByTestId('folder-picker')).toBeNull();
    expect(screen.getByText('/home/me/llms')).toBeTruthy();

    // Esc leaves the settings open; a typed path that is gone says so.
    fireEvent.change(screen.getByTestId('setting-model_folder_new'), { target: { value: '/nowhere' } });
    fireEvent.click(screen.getByTestId('setting-model_folder_browse'));
    expect((await screen.findByTestId('folder-picker-error')).textContent).toContain('No such file');
    fireEvent.keyDown(screen.getByTestId('folder-picker'), { key: 'Escape' });
    expect(screen.queryByTestId('folder-picker')).toBeNull();
    expect(screen.getByTestId('settings-pane')).toBeTruthy();

    commands.set('save_settings', (args) => args.settings);
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    expect((lastArgs('save_settings')?.settings as typeof settings | undefined)?.model_folders).toEqual([
      ...settings.model_folders,
      '/home/me/llms',
    ]);
  });

  it("keeps a chat's own system prompt beside the one in Settings", async () => {
    await renderApp();
    expect(screen.queryByTestId('chat-prompt-button')).toBeNull();
    fireEvent.click(within(screen.getByTestId('conversation-item')).getByText('First chat'));
    const button = await screen.findByTestId('chat-prompt-button');
    expect(button.textContent).toBe('Chat prompt');
    commands.set('set_system_prompt', (args) => ({
      ...conversation(1, 'First chat'),
      system_prompt: (args.prompt as string).trim() || null,
    }));
    fireEvent.click(button);
    const field = screen.getByTestId('chat-prompt-field') as HTMLTextAreaElement;
    expect(field.placeholder).toContain('Be brief.');
    fireEvent.change(field, { target: { value: 'Answer in French.' } });
    fireEvent.click(screen.getByTestId('chat-prompt-save'));
    await waitFor(() => expect(screen.getByTestId('chat-prompt-button').textContent).toBe('Chat prompt (own)'));
    expect(lastArgs('set_system_prompt')).toEqual({ id: 1, prompt: 'Answer in French.' });
    expect(screen.queryByTestId('chat-prompt-panel')).toBeNull();

    fireEvent.click(screen.getByTestId('chat-prompt-button'));
    expect((screen.getByTestId('chat-prompt-field') as HTMLTextAreaElement).value).toBe('Answer in French.');
    fireEvent.click(screen.getByTestId('chat-prompt-clear'));
    await waitFor(() => expect(screen.getByTestId('chat-prompt-button').textContent).toBe('Chat prompt'));
    expect(lastArgs('set_system_prompt')).toEqual({ id: 1, prompt: '' });
  });

  it('hides and shows the chat list', async () => {
    const { container } = await renderApp();
    const toggle = screen.getByTestId('sidebar-toggle');
    expect(toggle.getAttribute('aria-expanded')).toBe('true');
    fireEvent.click(toggle);
    expect(container.querySelector('.app-shell')?.classList.contains('sidebar-hidden')).toBe(true);
    expect(toggle.getAttribute('aria-label')).toBe('Show the chat list');
    fireEvent.click(toggle);
    expect(container.querySelector('.app-shell')?.classList.contains('sidebar-hidden')).toBe(false);
  });

  it('reverts a previewed theme on close', async () => {
    await renderApp();
    fireEvent.keyDown(document, { key: ',', ctrlKey: true });
    await screen.findByTestId('settings-pane');
    await waitFor(() => expect((screen.getByTestId('setting-theme') as HTMLSelectElement).value).toBe('light'));
    fireEvent.change(screen.getByTestId('setting-theme'), { target: { value: 'dark' } });
    expect(document.documentElement.dataset.theme).toBe('dark');
    fireEvent.keyDown(document, { key: 'Escape' });
    expect(screen.queryByTestId('settings-pane')).toBeNull();
    expect(document.documentElement.dataset.theme).toBe('light');
  });
});

describe('local server', () => {
  it('is off by default; turning it on saves port and key, and the header shows it and its requests', async () => {
    await renderApp();
    expect(screen.queryByTestId('server-badge')).toBeNull();
    fireEvent.click(screen.getByTestId('settings-button'));
    await screen.findByTestId('settings-pane');
    const enabled = (await screen.findByTestId('setting-server_enabled')) as HTMLInputElement;
    expect(enabled.checked).toBe(false);

    fireEvent.click(enabled);
    fireEvent.change(screen.getByTestId('setting-server_port'), { target: { value: '80' } });
    fireEvent.click(screen.getByTestId('settings-save'));
    expect((await screen.findByTestId('error-banner')).textContent).toContain('1024');

    commands.set('save_settings', (args) => args.settings);
    fireEvent.change(screen.getByTestId('setting-server_port'), { target: { value: '9191' } });
    fireEvent.change(screen.getByTestId('setting-server_key'), { target: { value: ' s3cret ' } });
    fireEvent.change(screen.getByTestId('setting-server_origins'), {
      target: { value: 'https://chat.example.com,  http://box.lan:3000 ' },
    });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    expect(lastArgs('save_settings')).toEqual({
      settings: {
        ...settings,
        server_enabled: true,
        server_port: 9191,
        server_key: 's3cret',
        server_origins: ['https://chat.example.com', 'http://box.lan:3000'],
      },
    });

    commands.set('server_status', () => ({ address: 'http://127.0.0.1:9191/v1', active_requests: 2, error: null, loaded: [] }));
    const badge = await screen.findByTestId('server-badge', {}, { timeout: 4000 });
    expect(badge.textContent).toBe('Server :9191 · 2 running');
  });

  it('marks in the picker the models the local server holds for its requests', async () => {
    commands.set('server_status', () => ({
      address: 'http://127.0.0.1:9191/v1',
      active_requests: 1,
      error: null,
      loaded: [{ name: 'Gemma 4', path: '/models/gemma4', requests: 1 }],
    }));
    await renderApp();
    await screen.findByTestId('server-badge');
    fireEvent.click(screen.getByTestId('model-picker'));
    const rows = await screen.findAllByTestId('model-row');
    const serving = rows.filter((row) => within(row).queryByTestId('model-serving'));
    expect(serving.map((row) => row.dataset.path)).toEqual(['/models/gemma4']);
  });

  it('says so in the header when the port could not be opened', async () => {
    commands.set('server_status', () => ({ address: null, active_requests: 0, error: 'could not listen on 127.0.0.1:8080', loaded: [] }));
    await renderApp();
    expect((await screen.findByTestId('server-badge')).title).toContain('could not listen');
  });
});
