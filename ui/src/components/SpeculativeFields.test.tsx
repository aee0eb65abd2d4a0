import { beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { installBackend, models, settings, smolLoaded } from '../test/fixtures';
import { callsOf, commands, lastArgs } from '../test/tauriMock';
import { renderApp } from '../test/renderApp';

beforeEach(() => installBackend());

const smallSmol = { ...models[0]!, name: 'SmolLM2 4-bit', path: '/models/smol-4bit', quantization: '4-bit' };

describe('the speculative decoding setting', () => {
  it('is off until chosen; the draft model offers only what shares the loaded model’s vocabulary, and is saved per model', async () => {
    commands.set('draft_candidates', () => [smallSmol]);
    commands.set('save_settings', (args) => args.settings);
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const method = (await screen.findByTestId('setting-speculative')) as HTMLSelectElement;
    expect(method.value).toBe('off');
    expect(screen.queryByTestId('setting-draft_model')).toBeNull();
    expect(callsOf('draft_candidates')).toHaveLength(0);

    fireEvent.change(method, { target: { value: 'draft_model' } });
    const draft = (await screen.findByTestId('setting-draft_model')) as HTMLSelectElement;
    await waitFor(() => expect(draft.options).toHaveLength(2));
    // The backend chose the candidates for the loaded model (by their vocabularies).
    expect(lastArgs('draft_candidates')).toEqual({ model: smolLoaded.path });
    expect([...draft.options].map((o) => o.textContent)).toEqual(['None (decode plainly)', 'SmolLM2 4-bit · 4-bit']);
    expect(draft.closest('label')?.textContent).toContain(`Draft model for ${smolLoaded.name}`);
    fireEvent.change(draft, { target: { value: smallSmol.path } });
    fireEvent.click(screen.getByTestId('settings-save'));
    await waitFor(() => expect(screen.queryByTestId('settings-pane')).toBeNull());
    expect(lastArgs('save_settings')).toEqual({
      settings: { ...settings, speculative: 'draft_model', model_drafts: { [smolLoaded.path]: smallSmol.path } },
    });
  });

  it('says so when no model shares the vocabulary, and prompt lookup needs no draft', async () => {
    commands.set('draft_candidates', () => []);
    commands.set('get_settings', () => ({ ...settings, speculative: 'draft_model' }));
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const draft = await screen.findByTestId('setting-draft_model');
    await waitFor(() => expect(draft.closest('label')?.textContent).toContain('No model in the model folders shares its vocabulary'));
    fireEvent.change(screen.getByTestId('setting-speculative'), { target: { value: 'prompt_lookup' } });
    expect(screen.queryByTestId('setting-draft_model')).toBeNull();
  });
});

describe('the picker’s speculative decoding choice', () => {
  it('offers off, prompt lookup and the loaded model’s drafts in one select, and saves the choice at once', async () => {
    commands.set('draft_candidates', () => [smallSmol]);
    let stored: unknown = settings;
    commands.set('save_settings', (args) => (stored = args.settings));
    commands.set('get_settings', () => stored);
    await renderApp();
    fireEvent.click(screen.getByTestId('model-picker'));
    const pick = (await screen.findByTestId('picker-speculative')) as HTMLSelectElement;
    await waitFor(() => expect(pick.options).toHaveLength(3));
    expect([...pick.options].map((o) => o.textContent)).toEqual(['Off', 'Prompt lookup (no second model)', 'Draft: SmolLM2 4-bit · 4-bit']);
    expect(pick.value).toBe('off');
    expect(lastArgs('draft_candidates')).toEqual({ model: smolLoaded.path });

    const saved = callsOf('save_settings').length;
    fireEvent.change(pick, { target: { value: `draft:${smallSmol.path}` } });
    await waitFor(() => expect(callsOf('save_settings')).toHaveLength(saved + 1));
    expect(lastArgs('save_settings')).toEqual({
      settings: { ...settings, speculative: 'draft_model', model_drafts: { [smolLoaded.path]: smallSmol.path } },
    });
    await waitFor(() => expect(pick.value).toBe(`draft:${smallSmol.path}`));

    // Settings › Model shows what the picker chose.
    fireEvent.click(screen.getByTestId('settings-button'));
    expect(((await screen.findByTestId('setting-speculative')) as HTMLSelectElement).value).toBe('draft_model');
    await waitFor(() => expect((screen.getByTestId('setting-draft_model') as HTMLSelectElement).value).toBe(smallSmol.path));
  });

  it('says what failed when saving does, and keeps the saved choice', async () => {
    commands.set('draft_candidates', () => []);
    commands.set('save_settings', () => {
      throw 'the settings file is read-only';
    });
    await renderApp();
    fireEvent.click(screen.getByTestId('model-picker'));
    const pick = (await screen.findByTestId('picker-speculative')) as HTMLSelectElement;
    fireEvent.change(pick, { target: { value: 'prompt_lookup' } });
    expect(await screen.findByText(/Could not change speculative decoding: the settings file is read-only/)).toBeTruthy();
    expect(pick.value).toBe('off');
  });
});
