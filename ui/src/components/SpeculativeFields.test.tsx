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
