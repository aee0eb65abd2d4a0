import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { imageAttachment, installBackend, message, view } from '../test/fixtures';
import { holdStream, push, renderApp } from '../test/renderApp';
import { callsOf, commands, invoke, lastArgs } from '../test/tauriMock';
import type { ProviderInput, ProvidersView, RemotePlan } from '../ipc';

const KEY = 'sk-typed-in-the-page-1234';

/** A fake backend for providers: it keeps keys apart and answers with views that have none. */
function installProviders() {
  const state: ProvidersView & { keys: Map<number, string> } = {
    providers: [],
    selected: null,
    key_store: 'the test keyring',
    keys: new Map(),
  };
  const answer = (): ProvidersView => ({
    providers: state.providers.map((p) => ({ ...p, has_key: state.keys.has(p.id) })),
    selected: state.selected,
    key_store: state.key_store,
  });
  commands.set('list_providers', answer);
  commands.set('save_provider', (args) => {
    const input = args.provider as ProviderInput;
    const id = input.id ?? state.providers.length + 1;
    if (input.id === null) state.providers.push({ id, name: input.name, base_url: input.base_url, has_key: false, models: [] });
    if (input.api_key) state.keys.set(id, input.api_key);
    else if (input.api_key === '') state.keys.delete(id);
    return answer();
  });
  commands.set('refresh_provider_models', (args) => {
    const provider = state.providers.find((p) => p.id === args.id);
    if (provider) provider.models = [{ id: 'big-model', context_length: 32768, vision: false, audio: false, inputs_reported: false }];
    return answer();
  });
  commands.set('mark_remote_model_inputs', (args) => {
    const model = state.providers.find((p) => p.id === args.provider)?.models.find((m) => m.id === args.model);
    if (model) Object.assign(model, { vision: args.vision, audio: args.audio });
    return answer();
  });
  commands.set('select_remote_model', (args) => {
    state.selected = (args.choice as ProvidersView['selected']) ?? null;
    return answer();
  });
  return state;
}

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

async function addProvider() {
  fireEvent.click(screen.getByTestId('settings-button'));
  const section = await screen.findByTestId('remote-providers');
  fireEvent.click(within(section).getByTestId('provider-add'));
  fireEvent.change(screen.getByTestId('provider-name'), { target: { value: 'Workstation' } });
  fireEvent.change(screen.getByTestId('provider-url'), { target: { value: 'http://10.0.0.5:8000/v1' } });
  fireEvent.change(screen.getByTestId('provider-key'), { target: { value: KEY } });
  fireEvent.click(screen.getByTestId('provider-save'));
  await within(section).findByTestId('provider-model');
  return section;
}

describe('remote providers', () => {
  it('adds a provider, lists its models at once, and never shows the key again', async () => {
    const state = installProviders();
    await renderApp();
    const section = await addProvider();
    expect(lastArgs('save_provider')).toMatchObject({
      provider: { id: null, name: 'Workstation', base_url: 'http://10.0.0.5:8000/v1', api_key: KEY },
    });
    expect(callsOf('refresh_provider_models')).toEqual([{ id: 1 }]);
    expect(within(section).getByTestId('provider-key-status').textContent).toBe('key saved');
    expect(document.body.innerHTML).not.toContain(KEY);
    // Editing starts with an empty key field; saving without typing keeps the saved key.
    fireEvent.click(within(section).getByTestId('provider-edit'));
    expect((screen.getByTestId('provider-key') as HTMLInputElement).value).toBe('');
    fireEvent.click(screen.getByTestId('provider-save'));
    await waitFor(() => expect(lastArgs('save_provider')).toMatchObject({ provider: { id: 1, api_key: null } }));
    expect(state.keys.get(1)).toBe(KEY);
    // Marking a model as reading images, for an endpoint that does not say.
    fireEvent.click(within(section).getByTestId('provider-model-vision'));
    await waitFor(() =>
      expect(lastArgs('mark_remote_model_inputs')).toEqual({ provider: 1, model: 'big-model', vision: true, audio: false }),
    );
    await waitFor(() => expect((within(section).getByTestId('provider-model-vision') as HTMLInputElement).checked).toBe(true));
  });

  it('lists remote models in the picker; picking one marks the header and the reply says where it came from', async () => {
    installProviders();
    await renderApp();
    await addProvider();
    fireEvent.click(screen.getByTestId('settings-close'));
    expect(screen.queryByTestId('remote-badge')).toBeNull();

    fireEvent.click(screen.getByTestId('model-picker'));
    const item = await screen.findByTestId('remote-model-item');
    expect(item.textContent).toContain('big-model');
    expect(item.textContent).toContain('remote');
    expect(item.textContent).toContain('Workstation');
    fireEvent.click(item);
    await waitFor(() => expect(lastArgs('select_remote_model')).toEqual({ choice: { provider: 1, model: 'big-model' } }));
    expect((await screen.findByTestId('remote-badge')).textContent).toBe('Remote: Workstation');
    expect(screen.getByTestId('model-picker').textContent).toContain('big-model');

    // A reply through it: the plan says which machine wrote it; a cut stream keeps its text with why.
    const stream = holdStream('send_message');
    fireEvent.change(screen.getByTestId('composer-input'), { target: { value: 'Hello there' } });
    fireEvent.click(screen.getByTestId('send-button'));
    const user = message(1, 'user', 'Hello there', { conversation_id: 9 });
    await push(stream, {
      kind: 'started',
      user: view(user),
      reply: message(2, 'assistant', '', { conversation_id: 9, status: 'streaming', parent_id: 1 }),
    });
    const plan: RemotePlan = { provider: 'Workstation', server: 'http://10.0.0.5:8000', model: 'big-model', images: 1, clips: 0 };
    await push(stream, { kind: 'remote', plan });
    await push(stream, { kind: 'token', text: 'Hi, I' });
    const cut = 'The connection to http://10.0.0.5:8000 closed before the reply was finished (reset). The text received so far is kept.';
    const reply = message(2, 'assistant', 'Hi, I', { conversation_id: 9, status: 'interrupted', parent_id: 1, error: cut });
    await push(stream, { kind: 'error', message: cut, reply });
    await act(async () => stream.end());
    const bubble = screen.getAllByTestId('message').find((m) => m.dataset.id === '2')!;
    expect(bubble.dataset.status).toBe('interrupted');
    expect(bubble.textContent).toContain('Hi, I');
    expect(bubble.textContent).toContain('closed before the reply was finished');
    expect(within(bubble).getByTestId('plan').textContent).toBe(
      'written by big-model on Workstation (http://10.0.0.5:8000), a remote provider; 1 image sent as content parts',
    );

    // Picking the loaded local model again takes replies back, without reloading it.
    fireEvent.click(screen.getByTestId('model-picker'));
    fireEvent.click((await screen.findAllByTestId('model-item'))[0]!);
    await waitFor(() => expect(lastArgs('select_remote_model')).toEqual({ choice: null }));
    await waitFor(() => expect(screen.queryByTestId('remote-badge')).toBeNull());
    expect(callsOf('load_model')).toHaveLength(0);
  });

  it('a remote model not marked as reading images turns an image away before sending', async () => {
    const state = installProviders();
    await renderApp();
    await addProvider();
    fireEvent.click(screen.getByTestId('settings-close'));
    state.selected = { provider: 1, model: 'big-model' };
    fireEvent.click(screen.getByTestId('model-picker'));
    await screen.findByTestId('remote-badge');
    commands.set('attach_bytes', () => imageAttachment);
    const file = new File([new Uint8Array([1, 2])], 'cat.png', { type: 'image/png' });
    fireEvent.change(screen.getByTestId('file-input'), { target: { files: [file] } });
    expect((await screen.findByTestId('notice')).textContent).toContain('big-model on Workstation');
    expect(screen.queryByTestId('attachment-chip')).toBeNull();
  });
});
