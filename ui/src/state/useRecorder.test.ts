// The recorder's toggle judges by its own state, so a handler made in an earlier render (the
// window's shortcut listener before its effect re-ran) still stops a recording instead of
// cancelling it as if it were still opening. CI once lost a recording that way.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { cleanup, renderHook, waitFor } from '@testing-library/react';
import { useRecorder } from './useRecorder';

class FakeContext {
  sampleRate = 16000;
  state = 'running';
  destination = {};
  audioWorklet = { addModule: async () => Promise.reject(new Error('no AudioWorklet')) };
  processor: { connect: () => void; disconnect: () => void; onaudioprocess: ((event: unknown) => void) | null } | null = null;
  close = async () => {};
  createMediaStreamSource = () => ({ connect: () => {}, disconnect: () => {} });
  createAnalyser = () => ({ connect: () => {}, disconnect: () => {}, fftSize: 0, getFloatTimeDomainData: () => {} });
  createScriptProcessor = () => (this.processor = { connect: () => {}, disconnect: () => {}, onaudioprocess: null });
}

afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

describe('useRecorder', () => {
  it('stops, not cancels, through a toggle from the render before recording began', async () => {
    const contexts: FakeContext[] = [];
    vi.stubGlobal(
      'AudioContext',
      class extends FakeContext {
        constructor() {
          super();
          contexts.push(this);
        }
      },
    );
    Object.defineProperty(navigator, 'mediaDevices', {
      value: { getUserMedia: async () => ({ getTracks: () => [{ stop: () => {} }] }) },
      configurable: true,
    });
    const recorded = vi.fn<(file: File) => void>();
    const { result } = renderHook(() => useRecorder({ onRecorded: recorded, onError: () => {}, onNotice: () => {} }));
    const staleToggle = result.current.toggle;
    staleToggle();
    await waitFor(() => expect(result.current.phase).toBe('recording'));
    contexts[0]!.processor!.onaudioprocess!({ inputBuffer: { getChannelData: () => new Float32Array(160).fill(0.2) } });
    staleToggle();
    await waitFor(() => expect(recorded).toHaveBeenCalledTimes(1));
    expect(result.current.phase).toBe('idle');
  });
});
