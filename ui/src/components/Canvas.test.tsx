import { beforeEach, describe, expect, it } from 'vitest';
import { fireEvent, render, screen, waitFor, within } from '@testing-library/react';
import { installBackend, models, smolLoaded } from '../test/fixtures';
import type { CanvasUpdate, DenoisingParams, ModelInfo } from '../ipc';
import { push, renderApp, startReply } from '../test/renderApp';
import { commands, invoke } from '../test/tauriMock';
import { canvasStatsText, denoisingRows, FormingCanvas } from './Canvas';
import { ReplyStats } from './ReplyStats';

beforeEach(() => {
  installBackend();
  invoke.mockClear();
});

const params: DenoisingParams = {
  canvas_length: 4,
  max_steps: 16,
  entropy_bound: 0.6,
  t_min: 0.2,
  t_max: 0.4,
  stability_threshold: 0,
  confidence_threshold: 0.15,
};

const diffusionLoaded: ModelInfo = {
  ...smolLoaded,
  name: 'DiffusionGemma',
  path: '/models/diffusion_gemma',
  architecture: 'diffusion_gemma_text',
  format: 'Safetensors',
  denoising: params,
};

/** Longer than the longest wait between draws (useChat's MAX_DRAW_EVERY_MS). */
const DRAW_WAIT = 4000;

const step = (index: number, steps: number, pieces: [string, boolean][]): CanvasUpdate => ({
  index,
  steps,
  finished: false,
  pieces: pieces.map(([text, accepted]) => ({ text, accepted })),
});

describe('FormingCanvas', () => {
  it('draws accepted tokens solid and guesses faint, as plain text', () => {
    const hostile = '<img src=x onerror="alert(1)">';
    render(
      <FormingCanvas
        canvas={step(1, 3, [
          ['Once', true],
          [hostile, false],
          [' **upon**', true],
        ])}
      />,
    );
    const canvas = screen.getByTestId('forming-canvas');
    expect(canvas.textContent).toBe(`Once${hostile} **upon**`);
    expect(canvas.querySelector('img, strong')).toBeNull();
    const spans = [...canvas.querySelectorAll('span')];
    expect(spans.map((s) => s.className)).toEqual(['canvas-accepted', 'canvas-guess', 'canvas-accepted']);
    expect(canvas.title).toBe('Canvas 2, step 3: 2 of 3 tokens accepted');
  });
});

describe('canvas stats', () => {
  it('count canvases and their mean steps, and nothing for other replies', () => {
    expect(canvasStatsText([14, 12, 16])).toBe('3 canvases · 14 steps per canvas');
    expect(canvasStatsText([3, 4])).toBe('2 canvases · 3.5 steps per canvas');
    expect(canvasStatsText([5])).toBe('1 canvas · 5 steps per canvas');
    expect(canvasStatsText([])).toBeNull();
    expect(canvasStatsText(undefined)).toBeNull();
  });

  it('show under a denoising reply, its time to the first canvas', () => {
    render(
      <ReplyStats
        stats={{
          prompt_tokens: 20,
          cached_tokens: 0,
          generated_tokens: 24,
          time_to_first_token_ms: 90,
          decode_tokens_per_second: 310.25,
          speculative: null,
          model: 'DiffusionGemma',
          steps_per_canvas: [16, 16, 12],
        }}
      />,
    );
    expect(screen.getByTestId('reply-stats').textContent).toBe(
      '24 tokens · 3 canvases · 14.7 steps per canvas · 310.3 tok/s · 90 ms to first canvas · 0 of 20 prompt tokens cached',
    );
  });

  it('name each denoising parameter', () => {
    expect(denoisingRows(params).map(([label]) => label)).toEqual(['Canvas length', 'Steps per canvas', 'Entropy bound', 'Temperature']);
    expect(denoisingRows(params)[1]![1]).toBe('at most 16; a canvas stops early when the mean entropy falls below 0.15');
    expect(denoisingRows({ ...params, stability_threshold: 2 })[1]![1]).toContain('after 2 unchanged steps');
  });
});

describe('a denoising reply in the chat', () => {
  it('shows the canvas forming, then settles it into the reply', async () => {
    await renderApp();
    const { stream, reply } = await startReply('Tell a story');
    await push(stream, {
      kind: 'canvas',
      canvas: step(0, 1, [
        ['Once', true],
        [' up', false],
      ]),
    });
    await waitFor(() => expect(screen.getByTestId('forming-canvas').textContent).toBe('Once up'));
    expect(screen.queryByText('Writing…')).toBeNull();
    await push(stream, {
      kind: 'canvas',
      canvas: step(0, 2, [
        ['Once', true],
        [' upon', true],
      ]),
    });
    // Later draws wait their turn (drawInterval: up to 1.5 s when a draw is slow).
    await waitFor(() => expect(screen.getByTestId('forming-canvas').dataset.steps).toBe('2'), { timeout: DRAW_WAIT });
    // The canvas is written: its text joins the reply and the forming view goes.
    await push(stream, { kind: 'token', text: 'Once upon' });
    await push(stream, { kind: 'canvas', canvas: { index: 0, steps: 2, finished: true, pieces: [] } });
    await waitFor(() => expect(screen.queryByTestId('forming-canvas')).toBeNull(), { timeout: DRAW_WAIT });
    expect(screen.getAllByTestId('message-content').at(-1)?.textContent).toBe('Once upon');
    await push(stream, {
      kind: 'canvas',
      canvas: step(1, 1, [
        [' a', true],
        [' tim', false],
      ]),
    });
    await waitFor(() => expect(screen.getByTestId('forming-canvas').dataset.canvas).toBe('1'), { timeout: DRAW_WAIT });
    const stats = { prompt_tokens: 9, cached_tokens: 0, generated_tokens: 4, time_to_first_token_ms: 40, decode_tokens_per_second: 100 };
    const saved = {
      ...reply,
      status: 'complete' as const,
      content: 'Once upon a time',
      stats: { ...stats, model: 'DiffusionGemma', steps_per_canvas: [2, 2], speculative: null },
    };
    await push(stream, { kind: 'token', text: ' a time' });
    await push(stream, { kind: 'done', reply: saved });
    await waitFor(() => expect(screen.queryByTestId('forming-canvas')).toBeNull());
    expect(screen.getAllByTestId('message-content').at(-1)?.textContent).toBe('Once upon a time');
    expect(screen.getByTestId('reply-stats').textContent).toContain('2 canvases · 2 steps per canvas');
  });
});

describe('a diffusion model', () => {
  it('is marked in the picker', async () => {
    commands.set('list_models', () => [models[0]!, { ...models[1]!, name: 'DiffusionGemma', denoising: true }]);
    await renderApp();
    fireEvent.click(screen.getByTestId('model-picker'));
    const items = await screen.findAllByTestId('model-item');
    expect(within(items[1]!).getByTestId('model-denoising').textContent).toBe('diffusion');
    expect(within(items[0]!).queryByTestId('model-denoising')).toBeNull();
  });

  it('shows its denoising parameters in Settings instead of top-p and top-k', async () => {
    commands.set('model_state', () => ({ loaded: diffusionLoaded, loading: null, error: null, revision: 1 }));
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    const shown = await screen.findByTestId('denoising-params');
    expect(shown.textContent).toContain('4 tokens written in parallel');
    expect(shown.textContent).toContain('0.4 at the first step, falling to 0.2');
    for (const key of ['temperature', 'top_p', 'top_k', 'min_p', 'repetition_penalty']) {
      expect(screen.queryByTestId(`setting-${key}`)).toBeNull();
    }
    expect(screen.queryByTestId('sampling-presets')).toBeNull();
    expect(screen.getByTestId('setting-seed')).toBeTruthy();
    expect(screen.getByTestId('setting-max_tokens')).toBeTruthy();
  });

  it('leaves a token sampler its fields', async () => {
    await renderApp();
    fireEvent.click(screen.getByTestId('settings-button'));
    expect(await screen.findByTestId('setting-top_p')).toBeTruthy();
    expect(screen.queryByTestId('denoising-params')).toBeNull();
  });
});
