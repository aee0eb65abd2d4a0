// The composer's microphone: enabled only for a model that reads audio, recording through a
// fake getUserMedia and AudioContext (jsdom has neither) into a WAV attached like a pasted file.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { act, fireEvent, screen, waitFor } from '@testing-library/react';
import { gemmaLoaded, imageAttachment, installBackend } from '../test/fixtures';
import { renderApp } from '../test/renderApp';
import { callsOf, commands, emit, invoke } from '../test/tauriMock';
import { WAV_HEADER_BYTES } from '../lib/wav';

/** The AudioContexts made, each with the ScriptProcessorNode the recorder falls back to. */
const contexts: FakeContext[] = [];
const context = () => contexts.at(-1)!;
const track = { stop: vi.fn() };
const getUserMedia = vi.fn<(constraints: MediaStreamConstraints) => Promise<{ getTracks: () => (typeof track)[] }>>(async () => ({
  getTracks: () => [track],
}));

const node = () => ({ connect: vi.fn(), disconnect: vi.fn() });

class FakeContext {
  sampleRate = 16000;
  state = 'running';
  destination = {};
  // Without an AudioWorkletNode (jsdom has none) the recorder falls back to the ScriptProcessorNode.
  audioWorklet = {
    addModule: vi.fn(async (_url: string) => {
      if (!('AudioWorkletNode' in globalThis)) throw new Error('no AudioWorklet');
    }),
  };
  processor: (ReturnType<typeof node> & { onaudioprocess: ((event: unknown) => void) | null }) | null = null;
  close = vi.fn(async () => {});
  resume = vi.fn(async () => {});
  constructor() {
    contexts.push(this);
  }
  createMediaStreamSource = () => node();
  createAnalyser = () => ({ ...node(), fftSize: 0, getFloatTimeDomainData: (block: Float32Array) => block.fill(0.1) });
  createScriptProcessor = () => (this.processor = { ...node(), onaudioprocess: null });
  /** The microphone delivers `samples`. */
  deliver(samples: Float32Array) {
    this.processor?.onaudioprocess?.({ inputBuffer: { getChannelData: () => samples } });
  }
}

beforeEach(() => {
  installBackend();
  invoke.mockClear();
  getUserMedia.mockClear();
  track.stop.mockClear();
  contexts.length = 0;
  vi.stubGlobal('AudioContext', FakeContext);
  Object.defineProperty(navigator, 'mediaDevices', { value: { getUserMedia }, configurable: true });
  commands.set('attach_bytes', (args) => ({
    ...imageAttachment,
    hash: 'rec1',
    mime: 'audio/wav',
    original_name: args.name as string,
    size: (args.bytes as number[]).length,
    duration_ms: 2000,
  }));
});

afterEach(() => {
  vi.unstubAllGlobals();
});

const mic = () => screen.getByTestId('mic-button') as HTMLButtonElement;

async function withGemma() {
  await renderApp();
  act(() => emit('model-state', { loaded: gemmaLoaded, loading: null, error: null, revision: 101 }));
  await waitFor(() => expect(mic().disabled).toBe(false));
}

describe('microphone', () => {
  it('is off, naming a model with audio, when the model cannot hear', async () => {
    await renderApp();
    expect(mic().disabled).toBe(true);
    expect(mic().title).toBe("SmolLM2 can't hear audio. Load a model with audio, such as Gemma 4, to record from the microphone.");
  });

  it('records, meters, and attaches a WAV at the capture rate on Stop', async () => {
    await withGemma();
    expect(mic().title).toBe('Record from the microphone (Ctrl+Shift+M)');
    fireEvent.click(mic());
    await waitFor(() => expect(screen.getByTestId('recording').dataset.phase).toBe('recording'));
    expect(getUserMedia).toHaveBeenCalledWith({ audio: true, video: false });
    expect(mic().title).toBe('Stop recording (Ctrl+Shift+M)');
    // -20 dB from the analyser: two thirds of the meter, drawn within a few ticks.
    await waitFor(() => expect(screen.getByRole('meter', { name: 'Microphone level' }).getAttribute('aria-valuenow')).toMatch(/^0\.66/));
    context().deliver(new Float32Array(1600).fill(0.5));
    context().deliver(new Float32Array(1600).fill(-0.5));
    fireEvent.click(mic());
    const chip = await screen.findByTestId('attachment-chip');
    expect(chip.textContent).toMatch(/recording-\d{4}-\d{2}-\d{2}-\d{6}\.wav/);
    expect(chip.textContent).toContain('0:02');
    const [sent] = callsOf('attach_bytes');
    const bytes = Uint8Array.from(sent!.bytes as number[]);
    expect(bytes.length).toBe(WAV_HEADER_BYTES + 3200 * 2);
    expect(new DataView(bytes.buffer).getUint32(24, true)).toBe(16000);
    expect(track.stop).toHaveBeenCalled();
    expect(context().close).toHaveBeenCalled();
    expect(screen.queryByTestId('recording')).toBeNull();
  });

  it('starts and stops with Ctrl+Shift+M, and Esc cancels without attaching', async () => {
    await withGemma();
    fireEvent.keyDown(document, { key: 'M', ctrlKey: true, shiftKey: true });
    await waitFor(() => expect(screen.getByTestId('recording').dataset.phase).toBe('recording'));
    context().deliver(new Float32Array(160).fill(0.2));
    fireEvent.keyDown(document, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('recording')).toBeNull());
    expect(callsOf('attach_bytes')).toHaveLength(0);
    expect(track.stop).toHaveBeenCalled();

    fireEvent.keyDown(document, { key: 'm', metaKey: true, shiftKey: true });
    await waitFor(() => expect(screen.getByTestId('recording').dataset.phase).toBe('recording'));
    context().deliver(new Float32Array(160).fill(0.2));
    fireEvent.keyDown(document, { key: 'm', metaKey: true, shiftKey: true });
    await screen.findByTestId('attachment-chip');
    expect(callsOf('attach_bytes')).toHaveLength(1);
  });

  it('says in the composer when the microphone is refused or missing', async () => {
    await withGemma();
    getUserMedia.mockRejectedValueOnce(new DOMException('denied', 'NotAllowedError'));
    fireEvent.click(mic());
    expect((await screen.findByTestId('recording-note')).textContent).toMatch(/^Microphone access was denied\. Allow Confab/);
    expect(screen.queryByTestId('recording')).toBeNull();
    expect(mic().disabled).toBe(false);

    getUserMedia.mockRejectedValueOnce(new DOMException('none', 'NotFoundError'));
    fireEvent.click(mic());
    await waitFor(() =>
      expect(screen.getByTestId('recording-note').textContent).toBe('No microphone was found. Connect one and try again.'),
    );
  });

  it('stops at the length limit with a note, keeping what was recorded', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    try {
      await withGemma();
      fireEvent.click(mic());
      await waitFor(() => expect(screen.getByTestId('recording').dataset.phase).toBe('recording'));
      context().deliver(new Float32Array(160).fill(0.2));
      await act(async () => vi.advanceTimersByTimeAsync(10 * 60_000 + 100));
      await screen.findByTestId('attachment-chip');
      expect(screen.getByTestId('recording-note').textContent).toBe('Recording stopped at its 10-minute limit; it is attached.');
    } finally {
      vi.useRealTimers();
    }
  });

  it('captures through an AudioWorklet where one loads, keeping its last partial block', async () => {
    const ports: { onmessage: ((event: { data: unknown }) => void) | null; postMessage: (message: unknown) => void }[] = [];
    class FakeWorkletNode {
      connect = vi.fn();
      disconnect = vi.fn();
      port = {
        onmessage: null as ((event: { data: unknown }) => void) | null,
        // The worklet answers a flush with what it holds, after the blocks already posted.
        postMessage: (message: unknown) => {
          if ((message as { flush?: boolean }).flush) setTimeout(() => this.port.onmessage?.({ data: { last: new Float32Array(100) } }));
        },
      };
      constructor() {
        ports.push(this.port);
      }
    }
    vi.stubGlobal('AudioWorkletNode', FakeWorkletNode);
    await withGemma();
    fireEvent.click(mic());
    await waitFor(() => expect(screen.getByTestId('recording').dataset.phase).toBe('recording'));
    expect(context().audioWorklet.addModule).toHaveBeenCalledWith('/capture-worklet.js');
    expect(context().processor).toBeNull();
    ports[0]!.onmessage?.({ data: new Float32Array(4096) });
    fireEvent.click(mic());
    await screen.findByTestId('attachment-chip');
    expect((callsOf('attach_bytes')[0]!.bytes as number[]).length).toBe(WAV_HEADER_BYTES + (4096 + 100) * 2);
  });
});
