import { beforeEach, describe, expect, it } from 'vitest';
import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { Download, RepoDetails } from '../ipc';
import { CATALOG } from '../lib/catalog';
import { installBackend } from '../test/fixtures';
import { renderApp } from '../test/renderApp';
import { callsOf, commands, emit, invoke, lastArgs } from '../test/tauriMock';

const REPO = 'confab-test/tiny-llama';
const GiB = 1 << 30;

const details: RepoDetails = {
  repo: REPO,
  architecture: 'llama',
  runs: true,
  gated: false,
  model_files: ['config.json', 'model.safetensors'],
  model_bytes: 2 * GiB,
  files: [
    { name: 'config.json', size: 834, quantization: null, gguf: false, fits: true },
    { name: 'model.safetensors', size: 2 * GiB, quantization: '4-bit', gguf: false, fits: true },
    { name: 'tiny.Q4_K_M.gguf', size: 40 * GiB, quantization: 'Q4_K_M', gguf: true, fits: false },
  ],
  memory_bytes: 16 * GiB,
};

function download(change: Partial<Download>): Download {
  return {
    id: REPO,
    repo: REPO,
    files: [],
    status: 'running',
    file: 'model.safetensors',
    bytes: 0,
    total: 1000,
    bytes_per_second: 0,
    seconds_left: null,
    waiting: false,
    error: null,
    model_path: null,
    ...change,
  };
}

beforeEach(() => {
  installBackend();
  invoke.mockClear();
  commands.set('hub_settings', () => ({ endpoint: '', effective_endpoint: 'https://huggingface.co', token_set: false }));
  commands.set('repo_details', () => details);
  commands.set('search_hub', () => [{ id: REPO, downloads: 3, likes: 0, formats: ['safetensors'], runs: true }]);
  commands.set('start_download', (args) => download({ id: args.repo as string, repo: args.repo as string, files: args.files as string[] }));
  commands.set('pause_download', () => null);
  commands.set('resume_download', () => download({}));
  commands.set('cancel_download', () => null);
  commands.set('load_model', () => new Promise(() => {}));
});

async function openGetModels() {
  await renderApp();
  fireEvent.click(screen.getByTestId('get-models-button'));
  return screen.findByTestId('get-models');
}

describe('Get models', () => {
  it('lists the curated models with their badges', async () => {
    await openGetModels();
    const catalog = screen.getByTestId('catalog');
    expect(within(catalog).getAllByRole('listitem')).toHaveLength(CATALOG.length);
    expect(within(catalog).getAllByText('vision').length).toBeGreaterThan(0);
    expect(within(catalog).getAllByText('audio').length).toBeGreaterThan(0);
    // The default embedding model, marked as one: it searches documents, it does not chat.
    const embedder = within(catalog).getByText('Qwen/Qwen3-Embedding-0.6B').closest('li')!;
    expect(within(embedder).getByText('embedding model')).toBeTruthy();
    expect(within(catalog).getAllByText('GGUF').length).toBeGreaterThan(0);
  });

  it('searches the hub, shows a repository with sizes, quantization and fit, and downloads it', async () => {
    await openGetModels();
    fireEvent.change(screen.getByTestId('hub-search'), { target: { value: 'tiny' } });
    fireEvent.submit(screen.getByTestId('hub-search'));
    const results = await screen.findByTestId('search-results');
    expect(lastArgs('search_hub')).toEqual({ query: 'tiny' });
    fireEvent.click(within(results).getByText(REPO));
    const repo = await screen.findByTestId('repo-view');
    await waitFor(() => expect(within(repo).getByText('Q4_K_M')).toBeTruthy());
    expect(within(repo).getByText('4-bit')).toBeTruthy();
    expect(within(repo).getByText('too large')).toBeTruthy();
    expect(within(repo).getByText(/fits in this machine's 16.0 GB/)).toBeTruthy();
    fireEvent.click(within(repo).getByTestId('download-model'));
    await waitFor(() => expect(lastArgs('start_download')).toEqual({ repo: REPO, files: [] }));
    // One GGUF file alone.
    fireEvent.click(within(repo).getByRole('button', { name: 'Download' }));
    await waitFor(() => expect(lastArgs('start_download')).toEqual({ repo: REPO, files: ['tiny.Q4_K_M.gguf'] }));
  });

  it('shows progress, speed and time left, pauses and resumes, and refreshes the picker when done', async () => {
    await openGetModels();
    act(() => emit('download', download({ bytes: 250, bytes_per_second: 2048, seconds_left: 90 })));
    const row = await screen.findByTestId('download-row');
    expect((within(row).getByRole('progressbar') as HTMLProgressElement).value).toBe(25);
    expect(within(row).getByTestId('download-meta').textContent).toContain('2.0 KB/s · 2 min left');
    fireEvent.click(within(row).getByText('Pause'));
    await waitFor(() => expect(lastArgs('pause_download')).toEqual({ id: REPO }));
    act(() => emit('download', download({ bytes: 300, status: 'paused' })));
    fireEvent.click(within(screen.getByTestId('download-row')).getByText('Resume'));
    await waitFor(() => expect(lastArgs('resume_download')).toEqual({ id: REPO }));

    const listed = callsOf('list_models').length;
    act(() =>
      emit('download', download({ bytes: 1000, status: 'done', model_path: '/hub/models--confab-test--tiny-llama/snapshots/abc' })),
    );
    await waitFor(() => expect(callsOf('list_models').length).toBe(listed + 1));
    fireEvent.click(screen.getByTestId('download-load'));
    await waitFor(() => expect(lastArgs('load_model')).toEqual({ path: '/hub/models--confab-test--tiny-llama/snapshots/abc' }));
  });

  it('says when a download waits for another one of the same model', async () => {
    await openGetModels();
    act(() => emit('download', download({ bytes: 400, bytes_per_second: 2048, seconds_left: 30, waiting: true })));
    const meta = within(await screen.findByTestId('download-row')).getByTestId('download-meta');
    expect(meta.textContent).toContain('waiting for another download of this model');
    expect(meta.textContent).not.toContain('/s');
    act(() => emit('download', download({ bytes: 500, bytes_per_second: 2048, seconds_left: 30 })));
    await waitFor(() => expect(meta.textContent).toContain('2.0 KB/s'));
    expect(meta.textContent).not.toContain('waiting');
  });

  it('shows what went wrong on the row, and drops a cancelled one', async () => {
    await openGetModels();
    const message =
      'confab-test/tiny-llama is gated: accept its licence on its page on the hub, then set a token with read access (HF_TOKEN or Settings).';
    act(() => emit('download', download({ status: 'failed', error: message })));
    expect((await screen.findByTestId('download-error')).textContent).toBe(message);
    fireEvent.click(screen.getByText('Cancel'));
    await waitFor(() => expect(lastArgs('cancel_download')).toEqual({ id: REPO }));
    act(() => emit('download', download({ status: 'cancelled' })));
    await waitFor(() => expect(screen.queryByTestId('download-row')).toBeNull());
  });

  it('sends the token once and never shows it again', async () => {
    let tokenSet = false;
    commands.set('hub_settings', () => ({ endpoint: '', effective_endpoint: 'https://huggingface.co', token_set: tokenSet }));
    commands.set('save_hub_settings', (args) => {
      tokenSet = args.token !== '' && args.token !== null ? true : tokenSet;
      return { endpoint: args.endpoint, effective_endpoint: args.endpoint || 'https://huggingface.co', token_set: tokenSet };
    });
    await openGetModels();
    fireEvent.click(screen.getByText('Hub and token'));
    fireEvent.change(screen.getByTestId('hub-endpoint'), { target: { value: 'http://127.0.0.1:9000' } });
    fireEvent.change(screen.getByTestId('hub-token'), { target: { value: 'hf_secret_123' } });
    fireEvent.click(screen.getByTestId('hub-save'));
    await waitFor(() => expect(lastArgs('save_hub_settings')).toEqual({ endpoint: 'http://127.0.0.1:9000', token: 'hf_secret_123' }));
    await waitFor(() => expect((screen.getByTestId('hub-token') as HTMLInputElement).placeholder).toBe('A token is set'));
    expect((screen.getByTestId('hub-token') as HTMLInputElement).value).toBe('');
    expect(document.body.innerHTML).not.toContain('hf_secret_123');
    // Saving the endpoint alone leaves the token as it is.
    fireEvent.click(screen.getByTestId('hub-save'));
    await waitFor(() => expect(lastArgs('save_hub_settings')).toEqual({ endpoint: 'http://127.0.0.1:9000', token: null }));
  });
});
