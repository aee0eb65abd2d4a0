// Recording from the microphone into a WAV file: getUserMedia → AudioContext → the samples
// (an AudioWorklet where the web view has one, else a ScriptProcessorNode) → on stop, a WAV the
// composer attaches like a pasted file. An AnalyserNode feeds the level meter.
import { useCallback, useEffect, useRef, useState } from 'react';
import { errorMessage } from '../ipc';
import { encodeWav, joinChunks, meterLevel } from '../lib/wav';

/** Ten minutes: a long voice note, about 58 MB at 48 kHz. */
export const MAX_RECORDING_MS = 10 * 60_000;
/** How often the level meter and the clock redraw: 20 times a second. */
const METER_INTERVAL_MS = 50;
/** The worklet's last block is waited for at most this long on stop. */
const FLUSH_TIMEOUT_MS = 500;

export type RecorderPhase = 'idle' | 'starting' | 'recording';

export interface Recorder {
  phase: RecorderPhase;
  /** The input's loudness, 0 (silence, -60 dB) to 1 (full scale). */
  level: number;
  elapsedMs: number;
  start: () => void;
  /** Ends the recording and hands it over. */
  stop: () => void;
  /** Ends the recording and drops it. */
  cancel: () => void;
  /**
   * Stops a recording, cancels one still opening, or starts one, judged by the recorder's own
   * state rather than a render's: a shortcut can come before the new phase's render has run.
   */
  toggle: () => void;
}

interface Options {
  onRecorded: (file: File) => void;
  /** A recording that could not start or be made, in words for the composer. */
  onError: (message: string) => void;
  /** Something the user should know that is not a failure (the length limit). */
  onNotice: (message: string) => void;
  maxMs?: number;
}

interface Session {
  stream: MediaStream;
  context: AudioContext;
  source: MediaStreamAudioSourceNode;
  capture: AudioNode;
  analyser: AnalyserNode;
  chunks: Float32Array[];
  startedAt: number;
  timer: ReturnType<typeof setInterval> | null;
  /** Collects samples still held by the capture node. */
  flush: () => Promise<void>;
}

/** A failure whose message already says what to do. */
class Explained extends Error {}

/** What went wrong opening the microphone, and what to do about it. */
export function microphoneError(error: unknown): string {
  const name = error instanceof DOMException || error instanceof Error ? error.name : '';
  switch (name) {
    case 'NotAllowedError':
    case 'SecurityError':
      return 'Microphone access was denied. Allow Confab to use the microphone (on macOS: System Settings › Privacy & Security › Microphone) and try again.';
    case 'NotFoundError':
    case 'OverconstrainedError':
      return 'No microphone was found. Connect one and try again.';
    case 'NotReadableError':
    case 'AbortError':
      return 'The microphone could not be opened: another app may be using it.';
    default:
      return `Could not record: ${errorMessage(error)}`;
  }
}

/** "recording-2026-12-03-221530.wav", in local time. */
export function recordingName(at: Date): string {
  const two = (n: number) => String(n).padStart(2, '0');
  const day = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())}`;
  return `recording-${day}-${two(at.getHours())}${two(at.getMinutes())}${two(at.getSeconds())}.wav`;
}

/** The capture node: an AudioWorklet (off the main thread) where it loads, else a ScriptProcessorNode. */
async function captureNode(context: AudioContext, chunks: Float32Array[]): Promise<{ node: AudioNode; flush: () => Promise<void> }> {
  try {
    await context.audioWorklet.addModule(`${import.meta.env.BASE_URL}capture-worklet.js`);
    const node = new AudioWorkletNode(context, 'confab-capture', { numberOfInputs: 1, numberOfOutputs: 1, outputChannelCount: [1] });
    let flushed: (() => void) | null = null;
    node.port.onmessage = (event: MessageEvent<Float32Array | { last: Float32Array }>) => {
      if (event.data instanceof Float32Array) chunks.push(event.data);
      else {
        chunks.push(event.data.last);
        flushed?.();
      }
    };
    const flush = () =>
      new Promise<void>((resolve) => {
        const timeout = setTimeout(resolve, FLUSH_TIMEOUT_MS);
        flushed = () => {
          clearTimeout(timeout);
          resolve();
        };
        node.port.postMessage({ flush: true });
      });
    return { node, flush };
  } catch {
    // No AudioWorklet in this web view (or it would not load): the older, main-thread node.
    const node = context.createScriptProcessor(4096, 1, 1);
    node.onaudioprocess = (event) => chunks.push(new Float32Array(event.inputBuffer.getChannelData(0)));
    return { node, flush: () => Promise.resolve() };
  }
}

export function useRecorder({ onRecorded, onError, onNotice, maxMs = MAX_RECORDING_MS }: Options): Recorder {
  const [phase, setPhase] = useState<RecorderPhase>('idle');
  const [level, setLevel] = useState(0);
  const [elapsedMs, setElapsedMs] = useState(0);
  const session = useRef<Session | null>(null);
  // Set when Cancel comes while the microphone is still opening.
  const abandoned = useRef(false);
  const busy = useRef(false);
  const callbacks = useRef({ onRecorded, onError, onNotice });
  useEffect(() => {
    callbacks.current = { onRecorded, onError, onNotice };
  });

  const finish = useCallback(async (keep: boolean) => {
    const current = session.current;
    if (!current) return;
    session.current = null;
    if (current.timer) clearInterval(current.timer);
    try {
      if (keep) await current.flush();
    } finally {
      current.source.disconnect();
      current.capture.disconnect();
      current.stream.getTracks().forEach((track) => track.stop());
      void current.context.close().catch(() => {
        /* Already closed. */
      });
      setPhase('idle');
      setLevel(0);
      setElapsedMs(0);
    }
    if (!keep) return;
    const samples = joinChunks(current.chunks);
    if (samples.length === 0) {
      callbacks.current.onError('The recording is empty: the microphone sent no sound.');
      return;
    }
    const wav = encodeWav(samples, current.context.sampleRate);
    callbacks.current.onRecorded(new File([wav], recordingName(new Date(current.startedAt)), { type: 'audio/wav' }));
  }, []);

  const start = useCallback(() => {
    if (busy.current || session.current) return;
    busy.current = true;
    abandoned.current = false;
    setPhase('starting');
    void (async () => {
      let stream: MediaStream | null = null;
      let context: AudioContext | null = null;
      try {
        if (!navigator.mediaDevices?.getUserMedia) {
          throw new Explained('This window cannot use a microphone: its web view offers no media capture.');
        }
        try {
          stream = await navigator.mediaDevices.getUserMedia({ audio: true, video: false });
        } catch (e) {
          throw new Explained(microphoneError(e));
        }
        context = new AudioContext();
        if (context.state === 'suspended') await context.resume();
        const chunks: Float32Array[] = [];
        const source = context.createMediaStreamSource(stream);
        const analyser = context.createAnalyser();
        analyser.fftSize = 2048;
        source.connect(analyser);
        const { node, flush } = await captureNode(context, chunks);
        source.connect(node);
        // Connected so that the graph pulls it; its output is silence.
        node.connect(context.destination);
        if (abandoned.current) throw new Error('cancelled');
        const startedAt = Date.now();
        const current: Session = { stream, context, source, capture: node, analyser, chunks, startedAt, timer: null, flush };
        const block = new Float32Array(analyser.fftSize);
        current.timer = setInterval(() => {
          analyser.getFloatTimeDomainData(block);
          setLevel(meterLevel(block));
          const elapsed = Date.now() - startedAt;
          setElapsedMs(elapsed);
          if (elapsed >= maxMs) {
            callbacks.current.onNotice(`Recording stopped at its ${Math.round(maxMs / 60_000)}-minute limit; it is attached.`);
            void finish(true);
          }
        }, METER_INTERVAL_MS);
        session.current = current;
        setPhase('recording');
      } catch (e) {
        stream?.getTracks().forEach((track) => track.stop());
        void context?.close().catch(() => {
          /* Already closed. */
        });
        setPhase('idle');
        if (!abandoned.current) {
          callbacks.current.onError(e instanceof Explained ? e.message : `Could not record: ${errorMessage(e)}`);
        }
      } finally {
        busy.current = false;
      }
    })();
  }, [finish, maxMs]);

  const stop = useCallback(() => void finish(true), [finish]);
  const cancel = useCallback(() => {
    abandoned.current = true;
    void finish(false);
  }, [finish]);

  const toggle = useCallback(() => {
    if (session.current) stop();
    else if (busy.current) cancel();
    else start();
  }, [cancel, start, stop]);

  // Leaving the composer (another screen) ends the recording without keeping it.
  useEffect(
    () => () => {
      abandoned.current = true;
      void finish(false);
    },
    [finish],
  );

  return { phase, level, elapsedMs, start, stop, cancel, toggle };
}
